/**
 * Preloaded with `--import` into a process under test: records the URL of every module the
 * process loads and writes them, one a line, to the file named by `LADING_TEST_MODULE_LOG`
 * when the process exits, followed by Node's own modules it loaded (`node-internal:<name>`,
 * from `process.moduleLoadList`). Lets a test assert what a command does not load.
 */
import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';

const out = process.env.LADING_TEST_MODULE_LOG;
const loaded: string[] = [];
registerHooks({
  load(url, context, next) {
    loaded.push(url);
    return next(url, context);
  },
});
// NOTE: `moduleLoadList` is undocumented, hence not in Node's types.
const internal = (): string[] => ((process as unknown as { moduleLoadList: string[] }).moduleLoadList)
  .filter((m) => m.startsWith('NativeModule ')).map((m) => `node-internal:${m.slice('NativeModule '.length)}`);
if (out) process.on('exit', () => writeFileSync(out, `${[...loaded, ...internal()].join('\n')}\n`));
