/**
 * Built-in clusters. Numbers are vendor datasheet peaks (fp32, HBM/GDDR
 * bandwidth, board power) and the per-GPU unidirectional link bandwidth a
 * ring collective can use; sources are listed per preset in docs/clusters.md.
 */
import { parseClusterSpec, type ClusterSpec } from './spec';

export interface ClusterPreset {
  description: string;
  source: string;
  spec: ClusterSpec;
}

/**
 * Dense (non-sparse) peaks per precision. TITAN Xp (Pascal GP102) has no tensor cores and runs native fp16 at
 * 1/64 of fp32 (CUDA C Programming Guide, arithmetic throughput for CC 6.1), so AMP's fp16 GEMMs compute in fp32
 * arithmetic on fp16 storage: fp16 = the fp32 rate; no bf16. V100 SXM2: 125 TFLOPS fp16 tensor cores, no bf16/tf32
 * (Tesla V100 datasheet). A100 SXM4: tf32 156, bf16/fp16 312 (A100 datasheet, dense). H100 SXM5: tf32 494.7,
 * bf16/fp16 989.4, fp8 1978.9 (H100 architecture whitepaper, 2022, dense; the datasheet's 989/1979/3958 are sparse).
 * sms: TITAN Xp 30 (3,840 CUDA cores / 128 per Pascal SM, NVIDIA TITAN Xp specifications), V100 80 (Tesla V100
 * whitepaper), A100 108 (A100 whitepaper), H100 SXM5 132 (H100 whitepaper).
 * hostBandwidthGBs: achieved host↔GPU copy rate: PCIe 3.0 x16 ≈ 12 GB/s, 4.0 ≈ 25, 5.0 ≈ 50 (about 80% of
 * 15.75/31.5/63 GB/s per the PCI Express Base Specifications).
 * hostMemoryBandwidthGBs: the DGX node's DRAM peak over its 8 GPUs. DGX-1: 2× Xeon E5-2698 v4 (DGX-1 datasheet), 4
 * channels of DDR4-2400 each = 76.8 GB/s (Intel ARK) → 153.6 / 8 = 19.2. DGX A100: 2× EPYC 7742 (DGX A100
 * datasheet), 8 channels of DDR4-3200 each = 204.8 GB/s (AMD EPYC 7002 specifications) → 409.6 / 8 = 51.2. DGX H100:
 * 2× Xeon Platinum 8480C (DGX H100 datasheet), 8 channels of DDR5-4800 each = 307.2 GB/s → 614.4 / 8 = 76.8. The
 * WAP paper's TITAN Xp workstation does not name its CPU: not stated.
 * hostMemoryGB: the node's system memory over its 8 GPUs: DGX-1 512 GB (DGX-1 datasheet) → 64; DGX A100 640 GB
 * (the 80 GB-GPU system) 2 TB (DGX A100 datasheet) → 256; DGX H100 2 TB (DGX H100 datasheet) → 256.
 */
const titanXp = { name: 'TITAN Xp', sms: 30, tflops: 12.1, peakTflops: { fp32: 12.1, fp16: 12.1 }, memoryGB: 12, memoryBandwidthGBs: 547.7, powerW: 250, idlePowerW: 60, hostBandwidthGBs: 12 };
const v100 = { name: 'Tesla V100-SXM2-16GB', sms: 80, tflops: 15.7, peakTflops: { fp32: 15.7, fp16: 125 }, memoryGB: 16, memoryBandwidthGBs: 900, powerW: 300, idlePowerW: 40, hostBandwidthGBs: 12, hostMemoryBandwidthGBs: 19.2, hostMemoryGB: 64 };
const a100 = { name: 'A100-SXM4-80GB', sms: 108, tflops: 19.5, peakTflops: { fp32: 19.5, tf32: 156, bf16: 312, fp16: 312 }, memoryGB: 80, memoryBandwidthGBs: 2039, powerW: 400, idlePowerW: 50, hostBandwidthGBs: 25, hostMemoryBandwidthGBs: 51.2, hostMemoryGB: 256 };
const h100 = { name: 'H100-SXM5-80GB', sms: 132, tflops: 67, peakTflops: { fp32: 67, tf32: 494.7, bf16: 989.4, fp16: 989.4, fp8: 1978.9 }, memoryGB: 80, memoryBandwidthGBs: 3350, powerW: 700, idlePowerW: 70, hostBandwidthGBs: 50, hostMemoryBandwidthGBs: 76.8, hostMemoryGB: 256 };

const raw: Record<string, { description: string; source: string; json: unknown }> = {
  pcie4: {
    description: '4× NVIDIA TITAN Xp on PCIe 3.0 x16 (the WAP paper’s workstation)',
    source: 'NVIDIA TITAN Xp specifications; PCIe 3.0 x16 ≈ 15.75 GB/s peak, ~10 GB/s achieved',
    json: { name: '4x TITAN Xp over PCIe', nodes: 1, gpusPerNode: 4, gpu: titanXp, intraNode: { bandwidthGBs: 10, latencyUs: 10, name: 'pcie', p2p: false }, interNode: { bandwidthGBs: 12.5, latencyUs: 5, name: 'ib' } },
  },
  'dgx1-v100': {
    description: 'NVIDIA DGX-1 with 8× V100 SXM2 16 GB, NVLink 2 hybrid cube-mesh',
    source: 'NVIDIA DGX-1 datasheet; NVIDIA Tesla V100 datasheet (15.7 TFLOPS fp32, 125 fp16 tensor, 900 GB/s, 300 W, 6 NVLinks × 25 GB/s)',
    json: { name: 'DGX-1 (8x V100 SXM2)', nodes: 1, gpusPerNode: 8, gpu: v100, intraNode: { bandwidthGBs: 130, latencyUs: 5, name: 'nvlink' }, interNode: { bandwidthGBs: 50, latencyUs: 5, name: 'ib' } },
  },
  a100x8: {
    description: '8× NVIDIA A100 SXM4 80 GB with NVSwitch (DGX A100 / HGX A100)',
    source: 'NVIDIA A100 datasheet (19.5 TFLOPS fp32, 156 tf32, 312 bf16/fp16 dense, 2,039 GB/s, 400 W, NVLink 3 600 GB/s bidirectional); DGX A100 datasheet',
    json: { name: '8x A100 SXM4 80GB (NVSwitch)', nodes: 1, gpusPerNode: 8, gpu: a100, intraNode: { bandwidthGBs: 300, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 25, latencyUs: 5, name: 'ib' } },
  },
  h100x8: {
    description: '8× NVIDIA H100 SXM5 80 GB with NVSwitch (DGX H100 / HGX H100)',
    source: 'NVIDIA H100 datasheet and architecture whitepaper (67 TFLOPS fp32, 494.7 tf32, 989.4 bf16/fp16, 1978.9 fp8 dense, 3.35 TB/s, 700 W, NVLink 4 900 GB/s bidirectional); DGX H100 datasheet',
    json: { name: '8x H100 SXM5 80GB (NVSwitch)', nodes: 1, gpusPerNode: 8, gpu: h100, intraNode: { bandwidthGBs: 450, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 50, latencyUs: 5, name: 'ib' } },
  },
  'h100x16-2node': {
    description: '2 nodes of 8× H100 SXM5, NVSwitch inside a node, 400 Gb/s InfiniBand NDR per GPU between nodes',
    source: 'NVIDIA H100 datasheet; DGX H100 datasheet (8× ConnectX-7 400 Gb/s); NDR 400 Gb/s = 50 GB/s',
    json: { name: '2x8 H100 SXM5 (400 Gb/s IB)', nodes: 2, gpusPerNode: 8, gpu: h100, intraNode: { bandwidthGBs: 450, latencyUs: 3, name: 'nvlink' }, interNode: { bandwidthGBs: 50, latencyUs: 5, name: 'ib' } },
  },
};

export const CLUSTER_PRESETS: Record<string, ClusterPreset> = Object.fromEntries(
  Object.entries(raw).map(([id, p]) => [id, { description: p.description, source: p.source, spec: parseClusterSpec(p.json, `preset:${id}`) }]),
);

/**
 * Used when nothing is configured: the paper's communication-bound PCIe
 * workstation, where the GPU-count decision matters most and which most
 * closely resembles a desk-side multi-GPU box.
 */
export const DEFAULT_PRESET = 'pcie4';
