/**
 * Reads a secret (a password) from standard input: with a prompt and without echo on a
 * terminal, or the first line of piped input. Secrets are never taken from argv, where every
 * user of the machine could read them.
 */
import { OperatorError } from '../wiring/operator-error.ts';

/**
 * The password: typed twice on a terminal, else the first line of standard input. Rejects
 * with `OperatorError` when there is none, it is empty, the two typed differ or typing is
 * cancelled (Ctrl-C, Ctrl-D).
 */
export async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += String(chunk);
    if (!text) throw new OperatorError('no password on standard input: pipe it in as the first line, e.g. printf \'%s\\n\' "$PASSWORD" | lading …; nothing was changed.');
    const first = text.split(/\r?\n/, 1)[0] ?? '';
    if (!first) throw new OperatorError('the password on standard input (its first line) is empty; nothing was changed.');
    return first;
  }
  const first = await readHidden(prompt);
  const again = await readHidden('Repeat: ');
  if (first !== again) throw new OperatorError('the two passwords typed differ; nothing was changed.');
  if (!first) throw new OperatorError('the password is empty; nothing was changed.');
  return first;
}

/**
 * A password to log in with: typed once without echo on a terminal, else the first line of
 * standard input. Rejects with `OperatorError` when there is none or it is empty, or typing is
 * cancelled.
 */
export async function readPassword(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) {
    let text = '';
    for await (const chunk of process.stdin) text += String(chunk);
    const first = text.split(/\r?\n/, 1)[0] ?? '';
    if (!first) throw new OperatorError('no password on standard input: pipe it in as the first line, e.g. printf \'%s\\n\' "$PASSWORD" | lading login --password-stdin …');
    return first;
  }
  const typed = await readHidden(prompt);
  if (!typed) throw new OperatorError('the password is empty.');
  return typed;
}

/** One line typed on the terminal in raw mode, so nothing is echoed. Ctrl-C cancels. */
function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  let value = '';
  return new Promise((resolve, reject) => {
    const finish = (): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
    };
    const onData = (chunk: Buffer): void => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003' || ch === '\u0004') {
          finish();
          reject(new OperatorError('cancelled; nothing was changed.'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = Array.from(value).slice(0, -1).join('');
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
