// The BullMQ side of dev.mailbox.benchmarks.PeerHarness. Started once per run with the redis-server's
// host and port; reads one JSON command per line on stdin, runs it, and answers one JSON line on stdout
// ({"ok": true, ...} or {"ok": false, "error": "..."}). Only one command runs at a time, so while the
// Java side measures, this process sits idle in its event loop.
//
// Each leg does the same work as the Java leg it is compared with: jobs are deleted when completed
// (removeOnComplete), as an acknowledged message is, and the processor does nothing but note the job.
import { Queue, Worker } from 'bullmq';
import readline from 'node:readline';
import { readFileSync } from 'node:fs';

const [host, port] = [process.argv[2], Number(process.argv[3])];
const connection = { host, port, maxRetriesPerRequest: null };
const BODY = 'hello, mailbox';
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true };

const now = () => process.hrtime.bigint();
const seconds = (from) => Number(now() - from) / 1e9;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function withQueue(name, fn) {
  const queue = new Queue(name, { connection, defaultJobOptions: JOB_OPTIONS });
  await queue.waitUntilReady();
  try {
    return await fn(queue);
  } finally {
    await queue.obliterate({ force: true });
    await queue.close();
  }
}

async function fill(queue, n) {
  for (let i = 0; i < n; i += 1000) {
    const jobs = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) jobs.push({ name: 'm', data: BODY });
    await queue.addBulk(jobs);
  }
}

const commands = {
  // one add at a time, each awaited
  async produce({ queue: name, n }) {
    return withQueue(name, async (queue) => {
      const start = now();
      for (let i = 0; i < n; i++) await queue.add('m', BODY);
      return { seconds: seconds(start) };
    });
  },

  // addBulk of `batch` jobs at a time, each awaited
  async produceBatches({ queue: name, n, batch }) {
    return withQueue(name, async (queue) => {
      const jobs = [];
      for (let j = 0; j < batch; j++) jobs.push({ name: 'm', data: BODY });
      const start = now();
      for (let i = 0; i < n; i += batch) await queue.addBulk(jobs);
      return { seconds: seconds(start) };
    });
  },

  // n jobs queued beforehand (not timed); one Worker with the given concurrency takes them all
  async consume({ queue: name, n, concurrency }) {
    return withQueue(name, async (queue) => {
      await fill(queue, n);
      let completed = 0;
      let done;
      const finished = new Promise((resolve) => { done = resolve; });
      const worker = new Worker(name, async () => {}, { connection, concurrency, autorun: false });
      worker.on('completed', () => {
        if (++completed === n) done();
      });
      await worker.waitUntilReady();
      const start = now();
      worker.run();
      await finished;
      const s = seconds(start);
      await worker.close();
      return { seconds: s, completed };
    });
  },

  // send -> received: the worker is idle (blocked on its marker key) when each job is added; the
  // sample is from just before add() to the start of the processor. 2 ms between samples, as on
  // the Java side.
  async latency({ queue: name, samples, warmup }) {
    return withQueue(name, async (queue) => {
      let arrived;
      const worker = new Worker(name, async (job) => {
        arrived(now() - BigInt(job.data));
      }, { connection, concurrency: 1 });
      await worker.waitUntilReady();
      const out = [];
      for (let i = 0; i < warmup + samples; i++) {
        await pause(2);
        const got = new Promise((resolve) => { arrived = resolve; });
        const completed = new Promise((resolve) => worker.once('completed', resolve));
        await queue.add('m', now().toString());
        const nanos = await got;
        await completed;
        if (i >= warmup) out.push(Number(nanos));
      }
      await worker.close();
      return { nanos: out };
    });
  },
};

const lines = readline.createInterface({ input: process.stdin });
process.stdout.write(JSON.stringify({ ok: true, ready: true, bullmq: JSON.parse(readFileSync(new URL('./node_modules/bullmq/package.json', import.meta.url))).version }) + '\n');
for await (const line of lines) {
  if (!line.trim()) continue;
  let reply;
  try {
    const command = JSON.parse(line);
    reply = { ok: true, ...(await commands[command.op](command)) };
  } catch (e) {
    reply = { ok: false, error: String(e && e.stack || e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
process.exit(0);
