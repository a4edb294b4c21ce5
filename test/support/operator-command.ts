/** Running a maintenance command (`npm run backfill:*`) as an operator would: its own process, this run's table. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname;

/**
 * The environment the command runs with: this run's (its table and DynamoDB Local), without what the local Lambda
 * adapter set in this process (`AWS_LAMBDA_MAX_CONCURRENCY`, which makes Powertools expect Lambda's invocation
 * store): an operator's shell does not have it either.
 */
export const commandEnv = () => {
  const env = { ...process.env };
  delete env.AWS_LAMBDA_MAX_CONCURRENCY;
  return env;
};

/** Runs `npm run <script>`; its output, and the counts its last line prints as JSON. */
export async function runNpmScript<Counts>(script: string): Promise<{ output: string; counts: Counts }> {
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', script], { cwd: REPO_ROOT, env: commandEnv(), timeout: 30_000 });
  return { output: stdout, counts: JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as Counts };
}
