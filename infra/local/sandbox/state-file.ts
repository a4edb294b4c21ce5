/**
 * A sandbox's state file (the sandbox processor's, the sandbox rails'): `state.json` in the sandbox's directory,
 * rewritten on every `save()`: serialised, atomic (a temporary file renamed over it), flushed to disk (file and
 * directory) before the promise resolves, readable by its owner only.
 */
import { mkdir, open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';

const STATE_FILE = 'state.json';

/**
 * The state file's content, checked by `schema`, as parsed (not the checked copy: it keeps every key exactly as
 * saved, even one named `__proto__`); `undefined` on a first start (the directory is created then). A file that
 * cannot be read is `cannotRead`'s error naming it: starting empty over it would lose what it holds.
 */
export async function readStateFile(dir: string, schema: z.ZodType, cannotRead: (path: string, reason: string) => Error): Promise<unknown> {
  const path = join(dir, STATE_FILE);
  await mkdir(dir, { recursive: true });
  let content: unknown;
  try {
    content = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw cannotRead(path, error instanceof Error ? error.message : String(error));
  }
  const checked = schema.safeParse(content);
  if (!checked.success) throw cannotRead(path, z.prettifyError(checked.error));
  return content;
}

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
