// Progress of long commands on standard error: a bar on a terminal, otherwise
// (a log, CI) a line every tenth of the way.
import cliProgress from 'cli-progress';

export interface Progress {
  tick(done: number): void;
  /** Says what the work is doing while the count stands still (a load's indexes being built). */
  say(text: string): void;
  stop(): void;
}

/** `label` names the work ("importing"), `unit` what is counted ("rows", "MiB"). */
export function progress(label: string, total: number, unit: string): Progress {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format:
          `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {speed} ${unit}/s | ETA {eta_formatted}` +
          // What say() last said.
          '{phase}',
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    const started = performance.now();
    bar.start(total, 0, { speed: 0, phase: '' });
    return {
      tick: (done) =>
        bar.update(Math.min(done, total), { speed: Math.round(done / ((performance.now() - started) / 1000)) }),
      say: (text) => bar.update({ phase: ` | ${text}` }),
      stop: () => bar.stop(),
    };
  }
  let nextTenth = 1;
  return {
    tick(done) {
      if (total === 0 || done < (total * nextTenth) / 10) return;
      while (done >= (total * nextTenth) / 10) nextTenth++;
      process.stderr.write(
        `${label}: ${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} ` +
          `${unit} (${Math.min(100, Math.floor((done / total) * 100))}%)\n`,
      );
    },
    say: (text) => process.stderr.write(`${label}: ${text}\n`),
    stop: () => {},
  };
}
