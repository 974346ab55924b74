// iota.js (@iota/core 1.0.0-beta) against `curlpow serve`, the way a wallet calls a remote-PoW
// node: getNodeInfo (features must list RemotePOW), attachToTangle on a real 4-transaction bundle,
// and the errors a wallet reads (Trinity's bare-attach probe, an unknown command).
//
// usage: node iota_js_client.js http://127.0.0.1:PORT
'use strict'

const path = require('path')
const fs = require('fs')
const { composeAPI } = require('@iota/core')
const { createHttpClient } = require('@iota/http-client')
const { asTransactionObject } = require('@iota/transaction-converter')
const { trytesToTrits } = require('@iota/converter')

const provider = process.argv[2]
if (!provider) {
  console.error('usage: node iota_js_client.js http://HOST:PORT')
  process.exit(2)
}

function check(cond, what) {
  if (!cond) {
    throw new Error('check failed: ' + what)
  }
  console.log('ok: ' + what)
}

async function expectRejection(promise, words, what) {
  try {
    await promise
  } catch (e) {
    check(String(e.message).includes(words), `${what} rejects with "${words}" (got "${e.message}")`)
    return
  }
  throw new Error(`${what}: expected a rejection`)
}

async function main() {
  const iota = composeAPI({ provider })
  const client = createHttpClient({ provider })

  const info = await iota.getNodeInfo()
  check(info.appName === 'curlpow', 'getNodeInfo appName')
  check(Array.isArray(info.features) && info.features.includes('RemotePOW'), 'getNodeInfo features lists RemotePOW')

  const vector = JSON.parse(
    fs.readFileSync(path.join(__dirname, '..', 'vectors', 'attach_to_tangle_bundle_iota_js.json'), 'utf8'),
  )
  const req = vector.attachToTangle_request
  // Head first, as wallets send a bundle.
  const trytes = vector.transactions.map(t => t.trytes).reverse()
  const mwm = 9
  const out = await iota.attachToTangle(req.trunkTransaction, req.branchTransaction, mwm, trytes)
  check(Array.isArray(out) && out.length === 4, 'attachToTangle answers 4 transactions')
  check(out.every(t => t.length === 2673), 'every answered transaction is 2673 trytes')
  const txs = out.map(t => asTransactionObject(t))
  check(txs.every((t, i) => t.currentIndex === i), 'the answer is tail first')
  // The hash iota.js computes itself (its own Curl-P-81) ends in at least MWM zero trits.
  const weight = hash => {
    const t = trytesToTrits(hash)
    let n = 0
    while (n < t.length && t[t.length - 1 - n] === 0) n++
    return n
  }
  check(txs.every(t => weight(t.hash) >= mwm), `every hash has weight >= ${mwm} (iota.js Curl)`)
  const head = txs[txs.length - 1]
  check(head.trunkTransaction === req.trunkTransaction && head.branchTransaction === req.branchTransaction,
    'the head takes the given trunk and branch')
  for (let i = 0; i + 1 < txs.length; i++) {
    check(txs[i].trunkTransaction === txs[i + 1].hash, `tx ${i}: trunk = hash of tx ${i + 1}`)
    check(txs[i].branchTransaction === req.trunkTransaction, `tx ${i}: branch = the given trunk`)
  }
  for (let i = 0; i < txs.length; i++) {
    const before = asTransactionObject(trytes[trytes.length - 1 - i])
    check(txs[i].bundle === before.bundle && txs[i].address === before.address && txs[i].value === before.value,
      `tx ${i}: bundle, address and value unchanged`)
  }

  await expectRejection(client.send({ command: 'attachToTangle' }), 'Invalid parameters', "Trinity's bare attachToTangle probe")
  await expectRejection(client.send({ command: 'fooBar' }), 'Command [fooBar] is unknown', 'an unknown command')
  const interrupted = await client.send({ command: 'interruptAttachingToTangle' })
  check(typeof interrupted.duration === 'number', 'interruptAttachingToTangle answers with a duration')
  console.log('iota.js compatibility: all checks passed')
}

main().catch(e => {
  console.error(String(e && e.stack ? e.stack : e))
  process.exit(1)
})
