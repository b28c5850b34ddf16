/**
 * Calls into libraries by canonical path: torch.nn constructors, torch/F
 * functions, keras layers and models, the few stdlib helpers model code
 * uses (OrderedDict, math, functools.partial), and the wrappers training
 * code puts around a model (trainingWrappers.ts).
 */
import { dataLoaderCall } from './runLoaderBatch';
import { callArrayFunction } from './arrayOps';
import type { Interp } from './interpreter';
import { constructKerasLayer, kerasInput, kerasModel, kerasSequential } from './kerasRuntime';
import { torchFunction, tensorsIn } from './tensorOps';
import { constructTorchLayer } from './torchModuleValues';
import { callTransformers } from './transformersRuntime';
import { checkpointCall, trainingWrapper } from './trainingWrappers';
import { callArgparse, deepspeedConfigArguments } from './argparseRuntime';
import { literalEval } from './scriptExec';
import { loadSettings } from './settingsFiles';
import { callHydra } from './hydraRuntime';
import { lightningCli } from './lightningCli';
import { recordOptimizedModels } from './optimizerModels';
import { hfArgumentParser } from './hfArgumentParser';
import { callEinops } from './einops';
import { peftConfig } from './peftCalls';
import { cudaQuery } from './cudaQueries';
import { callOsPath } from './osPaths';
import { extendSysPath } from './sysPath';
import { NONE, UNKNOWN, int, keyOf, native, num, str, toNumber, type CallSite, type DictV, type Value } from './values';
import { withProps } from '../../core/objects';

/** LightningCLI wherever Lightning exports it (lightning.pytorch.cli, pytorch_lightning.cli, the 1.x utilities.cli). */
const LIGHTNING_CLI = /^(lightning\.pytorch|pytorch_lightning)(\.utilities)?(\.cli)?\.LightningCLI$/;

const CONSTANTS: Record<string, Value> = {
  'math.pi': num(Math.PI, true),
  'math.e': num(Math.E, true),
  'math.inf': num(Infinity, true),
  'keras.backend.image_data_format': native('image_data_format', () => str('channels_last')),
  'os.pardir': str('..'),
  'os.curdir': str('.'),
  'os.sep': str('/'),
  'os.path.pardir': str('..'),
  'os.path.curdir': str('.'),
  'os.path.sep': str('/'),
};

export function libraryAttr(path: string): Value {
  return CONSTANTS[path] ?? { k: 'lib', path };
}

const MATH: Record<string, (xs: number[]) => number> = {
  sqrt: ([x]) => Math.sqrt(x),
  ceil: ([x]) => Math.ceil(x),
  floor: ([x]) => Math.floor(x),
  log: ([x, b]) => (b ? Math.log(x) / Math.log(b) : Math.log(x)),
  log2: ([x]) => Math.log2(x),
  log10: ([x]) => Math.log10(x),
  exp: ([x]) => Math.exp(x),
  pow: ([x, y]) => x ** y,
  prod: (xs) => xs.reduce((a, b) => a * b, 1),
  isqrt: ([x]) => Math.floor(Math.sqrt(x)),
  gcd: ([a, b]) => {
    let [x, y] = [Math.abs(a), Math.abs(b)];
    while (y) [x, y] = [y, x % y];
    return x;
  },
};

export function callLibrary(interp: Interp, path: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  recordOptimizedModels(interp, path, args, kwargs, site);
  const wrapped = trainingWrapper(interp, path, args, kwargs, site) ?? checkpointCall(interp, path, args, kwargs, site) ?? dataLoaderCall(interp, path, args, kwargs, site);
  if (wrapped) return wrapped;
  const last = path.slice(path.lastIndexOf('.') + 1);
  if (path.startsWith('torch.') || path.startsWith('numpy.')) {
    const array = callArrayFunction(path, args, kwargs, !!interp.graph?.scope.length);
    if (array) return array;
  }
  const cuda = cudaQuery(path);
  if (cuda) return cuda;
  if (path.startsWith('torch.')) return callTorch(interp, path, last, args, kwargs, site);
  if (/^(transformers\.(hf_argparser\.)?HfArgumentParser|trl\.(scripts\.utils\.)?TrlParser)$/.test(path)) return hfArgumentParser(interp, args, site.node);
  if (path.startsWith('transformers.')) return callTransformers(interp, path, args, kwargs, site);
  if (path.startsWith('peft.')) {
    const config = peftConfig(path, kwargs);
    if (config) return config;
  }
  if (path.startsWith('argparse.')) return callArgparse(interp, path, site) ?? UNKNOWN;
  if (path === 'deepspeed.add_config_arguments') return deepspeedConfigArguments(interp, args[0] ?? kwargs.get('parser'), site);
  if (path === 'ast.literal_eval') return literalEval(args, site.node);
  if (path.startsWith('os.path.')) return callOsPath(interp, path, args) ?? UNKNOWN;
  if (path === 'sys.path.append' || path === 'sys.path.insert') return extendSysPath(interp, path, args, site);
  const settings = loadSettings(interp, path, args);
  if (settings) return settings;
  if (LIGHTNING_CLI.test(path)) return lightningCli(interp, args, kwargs, site);
  if (path.startsWith('hydra.')) {
    const hydra = callHydra(interp, path, args, kwargs, site);
    if (hydra) return hydra;
  }
  if (path.startsWith('einops.')) return callEinops(interp, path, args, kwargs, site) ?? UNKNOWN;
  if (path.startsWith('keras.')) {
    if (path === 'keras.Input') return kerasInput(interp, args, kwargs, site);
    if (path === 'keras.Sequential') return kerasSequential(interp, args, kwargs, site);
    if (path === 'keras.Model') return kerasModel(interp, args, kwargs, site);
    if (path.startsWith('keras.layers.') && /^[A-Z]/.test(last)) return constructKerasLayer(interp, last, args, kwargs, site);
    if (path === 'keras.utils.get_source_inputs') return args[0] ?? UNKNOWN;
    // keras.applications builds its models in Keras' own code, which is never evaluated: no model, and the file says why.
    if (path.startsWith('keras.applications.') && /^[A-Z]/.test(last)) {
      interp.diagnostics.push({
        severity: 'error', code: 'keras-application', line: site.range.line, column: site.range.column, endLine: site.range.endLine, endColumn: site.range.endColumn,
        message: `${path} is built by Keras' own code, which WAP does not read: save its architecture with \`open("model.json", "w").write(model.to_json())\` and open that file, or write the model in this file`,
      });
    }
    return UNKNOWN;
  }
  if (path === 'collections.OrderedDict' || path === 'typing.OrderedDict') {
    const out: DictV = { k: 'dict', map: new Map() };
    const src = args[0];
    if (src?.k === 'dict') for (const [k, v] of src.map) out.map.set(k, v);
    else if (src && (src.k === 'list' || src.k === 'tuple')) {
      for (const pair of src.items) if ((pair.k === 'tuple' || pair.k === 'list') && pair.items.length === 2) out.map.set(keyOf(pair.items[0]), [pair.items[0], pair.items[1]]);
    }
    for (const [k, v] of kwargs) out.map.set('s:' + k, [str(k), v]);
    return out;
  }
  if (path === 'functools.partial') {
    const [fn, ...bound] = args;
    if (!fn) return UNKNOWN;
    return native('partial', (more, moreKw, s) => interp.callValue(fn, [...bound, ...more], new Map([...kwargs, ...moreKw]), s));
  }
  if (path.startsWith('math.') && MATH[last]) {
    const xs = args.map(toNumber);
    if (xs.some((x) => x === undefined)) return UNKNOWN;
    const r = MATH[last](xs as number[]);
    return ['ceil', 'floor', 'isqrt', 'gcd'].includes(last) ? int(r) : num(r, true);
  }
  if (path === 'copy.copy' || path === 'copy.deepcopy') return copyValue(args[0] ?? UNKNOWN);
  if (path === 'dataclasses.dataclass' || path === 'functools.wraps') return args[0] ?? UNKNOWN;
  if (path === 'typing.cast') return args[1] ?? UNKNOWN;
  return UNKNOWN;
}

function callTorch(interp: Interp, path: string, last: string, args: Value[], kwargs: Map<string, Value>, site: CallSite): Value {
  if (path.startsWith('torch.nn.init.')) return NONE;
  // Reading a model is neither scripting nor tracing it.
  if (path === 'torch.jit.is_scripting' || path === 'torch.jit.is_tracing' || path === 'torch._C._get_tracing_state') return { k: 'bool', v: false };
  if (path === 'torch.jit.annotate') return args[1] ?? UNKNOWN;
  if (path === 'torch._assert' || path === 'torch._C._log_api_usage_once') return NONE;
  if (path.startsWith('torch.nn.') && !path.startsWith('torch.nn.functional.') && /^[A-Z]/.test(last) && path.split('.').length === 3) {
    if (last === 'Module') return UNKNOWN;
    return constructTorchLayer(interp, last, args, kwargs, site);
  }
  if (path === 'torch.nn.utils.parametrizations.weight_norm' || path === 'torch.nn.utils.spectral_norm') return args[0] ?? UNKNOWN;
  const functional = path.startsWith('torch.nn.functional.') || path.startsWith('torch.linalg.') || path.split('.').length === 2;
  if (!functional) return UNKNOWN;
  const result = torchFunction(interp, last, args, kwargs, site);
  if (result) return result;
  const tensors = tensorsIn(args);
  if (tensors.length && interp.graph) {
    interp.warn(site.node, `${site.calleeText} is not modelled; its output is taken to be its input`, 'unknown-op', 'info');
    return tensors[0];
  }
  return UNKNOWN;
}

/** `copy.copy(cfg)`: a new object with the same attributes (config objects are copied before being edited). */
function copyValue(v: Value): Value {
  switch (v.k) {
    case 'inst':
      return withProps(v, { attrs: new Map(v.attrs), children: v.children && new Map(v.children) });
    case 'list':
      return { k: 'list', items: [...v.items] };
    case 'dict':
      return { k: 'dict', map: new Map(v.map) };
    default:
      return v;
  }
}
