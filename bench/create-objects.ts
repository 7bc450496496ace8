/**
 * Benchmark helper: creates N small data objects `o00000`, `o00001`, … in one collection through
 * the /api/registered upload API, with a fixed number of requests in flight, and prints how long
 * it took. Reads the bearer token from the BENCH_TOKEN environment variable (never argv). Only
 * meant for a lading instance on the loopback interface; it must not be pointed elsewhere.
 *
 * Usage: node bench/create-objects.ts <collection-url> <count> [concurrency=8]
 */
const [base, countArg, concurrencyArg] = process.argv.slice(2);
const token = process.env.BENCH_TOKEN;
if (!base || !countArg || !token) {
  console.error('usage: BENCH_TOKEN=… node bench/create-objects.ts <collection-url> <count> [concurrency]');
  process.exit(2);
}
const collection = base.replace(/\/$/, '');
const url = new URL(collection);
if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') {
  console.error('create-objects: only loopback targets are allowed');
  process.exit(2);
}
const count = Number(countArg);
const concurrency = Number(concurrencyArg ?? 8);
const body = Buffer.from('{"bench":true}\n');

let next = 0;
async function worker(): Promise<void> {
  while (next < count) {
    const i = next++;
    const name = `o${String(i).padStart(5, '0')}`;
    const res = await fetch(`${collection}/${name}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/octet-stream', Authorization: `Bearer ${token}` },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200 && res.status !== 201) throw new Error(`PUT ${name}: HTTP ${res.status}`);
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: concurrency }, worker));
const seconds = (performance.now() - started) / 1000;
console.log(`${count} ${seconds.toFixed(3)}`);
