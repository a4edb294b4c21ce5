/**
 * What the offline backfills (`npm run backfill:*`) share: a paged, resumable Scan of the table (the one kind of Scan
 * the codebase allows: a maintenance job run with an operator's credentials, never a request path; no function's role
 * grants Scan), its resume token, and running as a command.
 */
import { pathToFileURL } from 'node:url';
import { ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../lib/store/dynamo';

type Position = Record<string, unknown>;

const encodePosition = (position: Position) => Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
const decodePosition = (token: string) => JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Position;

/**
 * Scans the table with `scan` (a filter and projection), from the position `resume` names, handing each item to
 * `onItem` in turn; after each page `onPage` hears the items scanned so far and the token to resume after it (null
 * after the last). Returns the items scanned (every entity: a filter applies after the read).
 */
export async function scanTable(
  scan: Omit<ScanCommandInput, 'TableName' | 'ExclusiveStartKey'>,
  options: { resume?: string | undefined; onItem: (item: Record<string, unknown>) => Promise<void>; onPage?: (scanned: number, resumeToken: string | null) => void },
): Promise<number> {
  let scanned = 0;
  let position: Position | undefined = options.resume === undefined ? undefined : decodePosition(options.resume);
  do {
    const page = await documentClient.send(new ScanCommand({ ...scan, TableName: tableName, ExclusiveStartKey: position }));
    scanned += page.ScannedCount ?? 0;
    for (const item of page.Items ?? []) await options.onItem(item);
    position = page.LastEvaluatedKey;
    options.onPage?.(scanned, position === undefined ? null : encodePosition(position));
  } while (position !== undefined);
  return scanned;
}

/**
 * Runs a backfill as a command when `moduleUrl` is the script node was started with: `--resume <token>` read from
 * its arguments, each page's progress and the final counts printed (the last line JSON), a failure's message printed
 * with exit code 1.
 */
export function runBackfillCommand<Counts extends object>(
  moduleUrl: string,
  name: string,
  description: string,
  backfill: (options: { resume: string | undefined; onPage: (counts: Counts, resumeToken: string | null) => void }) => Promise<Counts>,
  summary: (counts: Counts) => string,
): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const main = async (args: string[]) => {
    const resumeAt = args.indexOf('--resume');
    const resume = resumeAt === -1 ? undefined : args[resumeAt + 1];
    if (resumeAt !== -1 && resume === undefined) throw new Error('--resume needs the token a previous run printed');
    console.log(`Backfilling ${description} in table ${tableName}${resume === undefined ? '' : ' (resumed)'}`);
    const counts = await backfill({
      resume,
      onPage: (sofar, token) => {
        if (token !== null) console.log(`  ${summary(sofar)}; resume with --resume ${token}`);
      },
    });
    console.log(`Done: ${summary(counts)}`);
    console.log(JSON.stringify({ backfill: name, ...counts }));
  };
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`Backfill failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
