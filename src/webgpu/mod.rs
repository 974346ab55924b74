//! wgpu backend (feature `wgpu`): Vulkan, Metal, DX12.
