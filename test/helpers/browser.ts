/**
 * Headless Chromium for the browser tests: Debian's `chromium` driven by playwright-core, and
 * axe-core run in a page. In CI a missing Chromium fails the test file at once (saying what to
 * install); locally the tests skip with the same advice.
 */
import { access, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

// NOTE: without the background-networking flags Chromium keeps calling home, which on a
// closed network means a flood of failing connections.
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const available = await access(CHROMIUM).then(() => true, () => false);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (listed in .ci/apt-packages).`);

/** The `skip` option of a browser test: false when Chromium is there, else why the test skips. */
export const browserSkip: false | string = available ? false : `needs ${CHROMIUM}: apt-get install chromium`;

/** Starts headless Chromium with the flags this machine's closed network needs. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

export interface AxeViolation { id: string; impact: string | null; help: string; nodes: { target: unknown }[] }

let axeSource: Promise<string> | null = null;

/**
 * axe-core's violations on the page as it is now. Its script is evaluated through the debugging
 * protocol, which the page's Content-Security-Policy does not govern.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(await axeSource);
  // NOTE: page code as text: the tests are type-checked without the DOM's types.
  return (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
}

/** The violations a page must not have: axe-core's serious and critical ones. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
