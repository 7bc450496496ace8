/**
 * Reads a secret (a password) from standard input: with a prompt and without echo on a
 * terminal, or the first line of piped input. Secrets are never taken from argv, where every
 * user of the machine could read them.
 */
import { createInterface } from 'node:readline';

export async function readSecret(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += String(chunk);
    const first = text.split(/\r?\n/, 1)[0] ?? '';
    if (!first) throw new Error('no password on standard input');
    return first;
  }
  const read = async (label: string): Promise<string> => {
    process.stderr.write(label);
    stdin.setRawMode(true);
    const rl = createInterface({ input: stdin, terminal: false });
    try {
      return await new Promise<string>((resolve) => rl.once('line', resolve));
    } finally {
      rl.close();
      stdin.setRawMode(false);
      process.stderr.write('\n');
    }
  };
  const first = await read(prompt);
  const again = await read('Repeat: ');
  if (first !== again) throw new Error('the passwords differ');
  if (!first) throw new Error('the password is empty');
  return first;
}
