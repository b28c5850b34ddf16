/**
 * Import resolution for the Python frontend: module names → source files,
 * read statically (never imported or run). See resolver.ts.
 */
export { ImportResolver, relativeBase, type ImportOptions, type Resolution } from './resolver';
export { forgetFileStats, readSource, type SourceText } from './sourceFiles';
export { isModelledOrStdlib, isSitePackages } from './policy';
