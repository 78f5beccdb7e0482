// The BullMQ side of dev.mailbox.benchmarks.PeerHarness. Started once per run with the redis-server's
// host and port; reads one JSON command per line on stdin, runs it, and answers one JSON line on stdout
// ({"ok": true, ...} or {"ok": false, "error": "..."}). Only one command runs at a time, so while the
// Java side measures, this process sits idle in its event loop.
//
// Each leg does the same work as the Java leg it is compared with: jobs are deleted when completed
// (removeOnComplete), as an acknowledged message is, and the processor does nothing but note the job.
//
// Every timed command also answers serverMicros: the CPU time redis-server's main thread spent between
// the two ends of the timed region (INFO cpu), so untimed set-up, filling and clean-up are not charged.
// The harness starts two of these processes: the 8-worker row also runs BullMQ as two processes of 4
// (prepare and start on each), and the latency row also runs with one process adding (produceTimed)
// while the other's worker receives (prepareLatency, collectLatency).
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

// redis-server's main thread CPU time so far, in microseconds
async function serverCpu(queue) {
  const info = await (await queue.client).info('cpu');
  const field = (name) => Number(info.match(new RegExp('^' + name + ':([0-9.]+)', 'm'))[1]);
  return (field('used_cpu_sys_main_thread') + field('used_cpu_user_main_thread')) * 1e6;
}

async function timed(queue, fn) {
  const cpu = await serverCpu(queue);
  const start = now();
  await fn();
  const s = seconds(start);
  return { seconds: s, serverMicros: (await serverCpu(queue)) - cpu };
}

// workers made by prepare / prepareLatency, by queue name, until start / collectLatency take them
const prepared = new Map();

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
    return withQueue(name, async (queue) => timed(queue, async () => {
      for (let i = 0; i < n; i++) await queue.add('m', BODY);
    }));
  },

  // addBulk of `batch` jobs at a time, each awaited
  async produceBatches({ queue: name, n, batch }) {
    return withQueue(name, async (queue) => {
      const jobs = [];
      for (let j = 0; j < batch; j++) jobs.push({ name: 'm', data: BODY });
      return timed(queue, async () => {
        for (let i = 0; i < n; i += batch) await queue.addBulk(jobs);
      });
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
      const result = await timed(queue, async () => {
        worker.run();
        await finished;
      });
      await worker.close();
      return { ...result, completed };
    });
  },

  // n jobs queued (not timed), for workers in several processes to take
  async fill({ queue: name, n }) {
    const queue = new Queue(name, { connection, defaultJobOptions: JOB_OPTIONS });
    await queue.waitUntilReady();
    await fill(queue, n);
    await queue.close();
    return {};
  },

  // a Worker with this concurrency, ready but not running (start runs it)
  async prepare({ queue: name, concurrency }) {
    const state = { completed: 0, last: 0n };
    const worker = new Worker(name, async () => {}, { connection, concurrency, autorun: false });
    worker.on('completed', () => {
      state.completed++;
      state.last = now();
    });
    await worker.waitUntilReady();
    prepared.set(name, { worker, state });
    return {};
  },

  // runs the prepared worker until it finds the queue empty, then closes it, which waits for the jobs it
  // still holds; the clock readings are CLOCK_MONOTONIC nanoseconds, comparable across processes on this
  // host (and with Java's nanoTime)
  async start({ queue: name }) {
    const { worker, state } = prepared.get(name);
    prepared.delete(name);
    const drained = new Promise((resolve) => worker.once('drained', resolve));
    const start = now();
    worker.run();
    await drained;
    await worker.close();
    return { start: start.toString(), end: (state.completed ? state.last : start).toString(), completed: state.completed };
  },

  // deletes a queue filled by fill
  async obliterate({ queue: name }) {
    const queue = new Queue(name, { connection });
    await queue.obliterate({ force: true });
    await queue.close();
    return {};
  },

  // the receiving half of the latency row across two processes: a Worker that notes each job's delay
  async prepareLatency({ queue: name }) {
    const nanos = [];
    const waiting = { count: 0, resolve: null };
    const worker = new Worker(name, async (job) => {
      nanos.push(Number(now() - BigInt(job.data)));
      if (waiting.resolve && nanos.length >= waiting.count) waiting.resolve();
    }, { connection, concurrency: 1 });
    await worker.waitUntilReady();
    prepared.set(name, { worker, nanos, waiting });
    return {};
  },

  // the sending half: one add every 2 ms, each carrying its send time (the receiving side deletes the queue)
  async produceTimed({ queue: name, count }) {
    const queue = new Queue(name, { connection, defaultJobOptions: JOB_OPTIONS });
    await queue.waitUntilReady();
    for (let i = 0; i < count; i++) {
      await pause(2);
      await queue.add('m', now().toString());
    }
    await queue.close();
    return {};
  },

  // waits for count jobs to have arrived at prepareLatency's worker, closes it, answers the delays
  async collectLatency({ queue: name, count, warmup }) {
    const { worker, nanos, waiting } = prepared.get(name);
    if (nanos.length < count) {
      await new Promise((resolve) => { waiting.count = count; waiting.resolve = resolve; });
    }
    prepared.delete(name);
    await worker.close();
    await commands.obliterate({ queue: name });
    return { nanos: nanos.slice(warmup) };
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
