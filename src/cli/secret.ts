/**
 * Reads a secret (a password) from standard input: with a prompt and without echo on a
 * terminal, or the first line of piped input. Secrets are never taken from argv, where every
 * user of the machine could read them.
 */

export async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += String(chunk);
    const first = text.split(/\r?\n/, 1)[0] ?? '';
    if (!first) throw new Error('no password on standard input');
    return first;
  }
  const first = await readHidden(prompt);
  const again = await readHidden('Repeat: ');
  if (first !== again) throw new Error('the passwords differ');
  if (!first) throw new Error('the password is empty');
  return first;
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
          reject(new Error('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = Array.from(value).slice(0, -1).join('');
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
