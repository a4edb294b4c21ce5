/**
 * A sandbox's state file (the sandbox processor's, the sandbox rails'): `state.json` in the sandbox's directory,
 * rewritten on every `save()`: serialised, atomic (a temporary file renamed over it), flushed to disk (file and
 * directory) before the promise resolves, readable by its owner only.
 */
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';

export const STATE_FILE = 'state.json';

/** Saves the state in `dir` on every `save()`: serialised, atomic, flushed to disk before the promise resolves. */
export class StateFile<T extends object> {
  private readonly path: string;
  private readonly tempPath: string;
  /** The last write queued; the next one starts once it has settled. Never rejects. */
  private tail: Promise<void> = Promise.resolve();
  /** A write queued but not started: it will write every change made until it starts. */
  private next: Promise<void> | undefined;

  constructor(
    private readonly dir: string,
    private readonly version: number,
    private readonly snapshot: () => T,
  ) {
    this.path = join(dir, STATE_FILE);
    this.tempPath = `${this.path}.tmp`;
  }

  /** Resolves once the state as it is now (or later) is on disk; rejects when that write failed. */
  save(): Promise<void> {
    if (this.next === undefined) {
      const next = this.tail.then(() => {
        this.next = undefined;
        return this.write();
      });
      this.next = next;
      this.tail = next.catch(() => undefined);
    }
    return this.next;
  }

  private async write(): Promise<void> {
    const text = JSON.stringify({ version: this.version, ...this.snapshot() });
    const file = await open(this.tempPath, 'w', 0o600); // it holds client secrets
    try {
      await file.writeFile(text, 'utf8');
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(this.tempPath, this.path);
    await syncDirectory(this.dir);
  }
}

/** Flushes a directory, which makes a rename in it durable (POSIX); Windows cannot open a directory to flush it. */
async function syncDirectory(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
