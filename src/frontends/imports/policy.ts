/**
 * Which imports are followed into source and which stay library paths.
 *
 * The evaluator models torch, Keras/TensorFlow and a few stdlib helpers by
 * their dotted paths (`torch.nn.Conv2d`, `math.sqrt`, `functools.partial`):
 * those are never read from disk. Neither is the rest of the standard library
 * nor the big numeric/tooling packages, whose sources are not model code and
 * would only cost time. Everything else that resolves to a `.py` file — the
 * user's own modules and model libraries such as torchvision and timm — is
 * read and evaluated.
 */

/** Top-level packages kept as library paths (modelled by the evaluator, or not model code). */
const NOT_FOLLOWED = new Set([
  // modelled by the evaluator
  'torch', 'keras', 'tensorflow', 'tf_keras',
  // Hugging Face models come from their configs, not their modeling files (too dynamic to evaluate)
  'transformers', 'huggingface_hub', 'safetensors', 'tokenizers', 'datasets', 'accelerate', 'peft', 'trl',
  // numeric and tooling packages: no model classes to read
  'numpy', 'scipy', 'jax', 'jaxlib', 'flax', 'optax', 'einops', 'PIL', 'cv2', 'pandas', 'sklearn', 'matplotlib',
  'tqdm', 'wandb', 'tensorboard', 'tensorboardX', 'yaml', 'omegaconf', 'hydra', 'tiktoken', 'sentencepiece',
  'deepspeed', 'lightning', 'pytorch_lightning', 'lightning_fabric', 'torchmetrics', 'apex', 'triton', 'xformers',
  'flash_attn', 'bitsandbytes', 'fairscale', 'megatron', 'typing_extensions', 'six', 'requests', 'packaging',
]);

/**
 * Standard-library top-level modules (a subset of `sys.stdlib_module_names`
 * large enough for model code). Needed where no interpreter was asked (an
 * untrusted workspace) to tell `import os` from a missing package.
 */
const STDLIB = new Set(
  (
    '__future__ abc argparse array ast asyncio base64 binascii bisect builtins bz2 cProfile calendar cmath codecs collections ' +
    'concurrent contextlib contextvars copy copyreg csv ctypes dataclasses datetime decimal difflib dis distutils doctest email ' +
    'enum errno faulthandler fcntl filecmp fnmatch fractions functools gc getopt getpass gettext glob gzip hashlib heapq hmac ' +
    'html http importlib inspect io ipaddress itertools json keyword linecache locale logging lzma marshal math mimetypes mmap ' +
    'multiprocessing numbers operator os pathlib pdb pickle pkgutil platform posixpath pprint profile pstats queue random re ' +
    'reprlib resource sched secrets select selectors shelve shlex shutil signal site socket sqlite3 ssl stat statistics string ' +
    'struct subprocess sys sysconfig tarfile tempfile textwrap threading time timeit token tokenize traceback tracemalloc types ' +
    'typing unicodedata unittest urllib uuid warnings weakref xml zipfile zlib zoneinfo'
  ).split(' '),
);

/** Whether `moduleName` (absolute, dotted) stays a library path without being looked up. */
export function isModelledOrStdlib(moduleName: string): boolean {
  const top = moduleName.split('.')[0];
  return NOT_FOLLOWED.has(top) || STDLIB.has(top);
}

/** A sys.path entry holding installed packages (as opposed to the standard library itself). */
export function isSitePackages(root: string): boolean {
  return /[\\/](site|dist)-packages[\\/]?$/.test(root);
}
