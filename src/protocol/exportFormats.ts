/**
 * The formats `wap/exportPlan` writes (src/configs/exportPlan.ts), declared once for the server, the CLI and the
 * extension's picker. Its own module so the CLI's configs room needs no LSP library to read it.
 */
export const EXPORT_FORMAT_IDS = ['deepspeed', 'accelerate', 'megatron', 'torchtitan', 'torchrun', 'hostfile', 'horovod', 'torch-parallelize'] as const;
export type ExportFormatId = (typeof EXPORT_FORMAT_IDS)[number];
