/** The core's public surface: IR types, canonical attrs, analysis, signatures and the catalogue. */
export * from './ir';
export type * from './ops';
export { analyzeModel } from './analyze';
export { layerSignature, stableStringify } from './signature';
export { ALL_OP_KINDS, catalogue, inferLayer, isInferError, opInfo } from './catalogue/index';
export type { CatalogueFamily, InferContext, InferError, InferOk, InferResult, OpInfo } from './catalogue/index';
export { assumeInput, DEFAULT_SEQUENCE_LENGTH } from './inputDefaults';
export type { AssumedInput } from './inputDefaults';
