/**
 * The names training stacks give the tokens per sample, on a command line or in a config: `block_size`
 * (transformers' run_clm.py, nanoGPT), `max_seq_length` and `max_length` (trl's SFTConfig before and after its
 * rename), `cutoff_len` (LLaMA-Factory), `sequence_len` (axolotl), `model_max_length` (the Alpaca and FastChat
 * scripts), `seq_len` (torchtitan), `seq_length` (Megatron-LM's --seq-length), and their common spellings. One list, so
 * a script's argparse and a config's keys name the same thing.
 */
export const SEQUENCE_LENGTH_NAMES: ReadonlySet<string> = new Set([
  'block_size', 'max_seq_length', 'max_length', 'cutoff_len', 'sequence_len', 'model_max_length',
  'seq_len', 'seq_length', 'sequence_length', 'max_seq_len', 'max_sequence_length', 'context_length',
]);
