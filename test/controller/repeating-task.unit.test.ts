/**
 * The loop the leader elector and shard membership renew their Lease with
 * (src/controller/repeating-task.ts): one run at a time, each after the last one ended, none after stop.
 */
import { eventually } from '../../dev/cluster.js';
import { RepeatingTask } from '../../src/controller/repeating-task.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

it('starts once, runs again only after the last run ended, waits for the run in progress on stop and runs no more', async () => {
  let runs = 0;
  let active = 0;
  let mostActive = 0;
  let release!: () => void;
  const blocked = new Promise<void>((resolve) => (release = resolve));
  const task = new RepeatingTask(
    async () => {
      runs++;
      active++;
      mostActive = Math.max(mostActive, active);
      if (runs === 3) await blocked;
      active--;
    },
    () => 0,
  );
  task.start();
  task.start();
  expect(task.isRunning).toBe(true);
  await eventually(() => runs === 3);
  for (let i = 0; i < 5; i++) await turn();
  // The third run hangs: no fourth starts beside it.
  expect(runs).toBe(3);

  let stopped = false;
  const stopping = task.stop(60_000).then(() => (stopped = true));
  expect(task.isRunning).toBe(false);
  await turn();
  expect(stopped).toBe(false);
  release();
  await stopping;
  for (let i = 0; i < 5; i++) await turn();
  expect(runs).toBe(3);
  expect(mostActive).toBe(1);
});
