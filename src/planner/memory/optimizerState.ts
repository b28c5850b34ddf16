/**
 * Optimizer state per parameter, by optimizer kind: how many buffers it keeps
 * and how many bytes each takes.
 *
 * Full-width optimizers keep each buffer at the width the precision gives
 * (precisionBytes' optimizerState: fp32, or the parameter's dtype under pure
 * 16-bit training). bitsandbytes' 8-bit optimizers (Dettmers et al., "8-bit
 * Optimizers via Block-wise Quantization", ICLR 2022, §2) keep each buffer as
 * one uint8 code per value plus one fp32 absmax per block of 2048 values
 * (bitsandbytes' Optimizer2State/Optimizer1State.init_state), whatever the
 * training precision. Tensors under its min_8bit_size (4096 values: biases,
 * norm scales) keep fp32 state; they are under 1% of a transformer's or a
 * ResNet's parameters and are priced at 8 bits with the rest. torchao's
 * AdamW8bit uses blocks of 256 (+1.4% over 2048's constants), within that.
 */
import type { OptimizerKind } from '../../protocol/plan';

/** Values per quantization block of bitsandbytes' block-wise 8-bit optimizer state. */
const EIGHT_BIT_BLOCK = 2048;
/** Bytes per state value held 8-bit: the code plus its share of the block's fp32 absmax. */
const EIGHT_BIT_STATE_BYTES = 1 + 4 / EIGHT_BIT_BLOCK;

/** Optimizer state buffers per parameter: SGD none, momentum one, Adam two (m and v); 8-bit or not. */
export function optimizerStateCopies(o: OptimizerKind): number {
  return o === 'adam' || o === 'adam8bit' ? 2 : o === 'momentum' || o === 'momentum8bit' ? 1 : 0;
}

/** Whether the optimizer holds its state 8-bit block-wise quantized (bitsandbytes). */
export function isEightBitOptimizer(o: OptimizerKind): boolean {
  return o === 'adam8bit' || o === 'momentum8bit';
}

/**
 * Bytes of optimizer state per parameter (all buffers, no master copy): `fullWidthBytes` per buffer value for
 * full-width optimizers, the 8-bit codes with their block constants otherwise.
 */
export function optimizerStateBytes(o: OptimizerKind, fullWidthBytes: number): number {
  return optimizerStateCopies(o) * (isEightBitOptimizer(o) ? EIGHT_BIT_STATE_BYTES : fullWidthBytes);
}

/** The full-width optimizer an 8-bit one quantizes (adam8bit → adam), for runs that cannot load bitsandbytes. */
export function fullWidthOptimizer(o: OptimizerKind): OptimizerKind {
  return o === 'adam8bit' ? 'adam' : o === 'momentum8bit' ? 'momentum' : o;
}
