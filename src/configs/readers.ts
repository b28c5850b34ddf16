/** Every config format WAP reads, in detection order. */
import { accelerateReader } from './accelerate';
import { axolotlReader } from './axolotl';
import { deepspeedReader } from './deepspeed';
import { deepspeedLaunchReader } from './deepspeedLaunch';
import { kerasMirroredReader } from './kerasMirrored';
import { torchrunReader, visibleDevicesReader } from './launchScripts';
import { lightningReader } from './lightning';
import { lightningYamlReader } from './lightningYaml';
import { megatronReader } from './megatron';
import { torchScriptReader } from './torchScript';
import { torchtitanReader } from './torchtitan';
import { trainerReader } from './trainer';
import { trainerArgvReader } from './trainerArgv';
import { trainerRecipeReader } from './trainerRecipe';
import type { ConfigFormat, ConfigReader } from './types';

export const READERS: ConfigReader[] = [accelerateReader, deepspeedReader, lightningReader, lightningYamlReader, kerasMirroredReader, torchrunReader, deepspeedLaunchReader, visibleDevicesReader, torchtitanReader, megatronReader, trainerReader, trainerArgvReader, trainerRecipeReader, axolotlReader, torchScriptReader];
export const READERS_BY_FORMAT = new Map<ConfigFormat, ConfigReader>(READERS.map((r) => [r.format, r]));
