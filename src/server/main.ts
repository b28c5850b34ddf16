/**
 * Entry of dist/server.js: `node dist/server.js --stdio` (any LSP client) or
 * `--node-ipc` (the VS Code extension). The transport is picked by
 * vscode-languageserver from the command line.
 */
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { startServer } from './server';

const connection = createConnection(ProposedFeatures.all);
// A bug in a background job must be logged, not end the process the editor depends on.
process.on('uncaughtException', (err) => connection.console.error(`wap: uncaught: ${err.stack ?? err.message}`));
process.on('unhandledRejection', (err) => connection.console.error(`wap: unhandled rejection: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`));
startServer(connection);
