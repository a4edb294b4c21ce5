/**
 * The local delivery queue's HTTP front: the subset of SQS's JSON protocol (AWS JSON 1.0) the service uses,
 * `SendMessage` (with `MessageGroupId`, which makes it a fair queue), to the delivery queue or another named queue (the
 * settlement continuations), so the real SQS client (lib/webhooks/sqs-queue.ts) sends to the local queue exactly as it sends
 * to SQS in AWS, the SDK's MD5 check of the body included. The queue's URL is
 * `http://127.0.0.1:<port>/000000000000/<name>`, the shape of an SQS queue URL.
 *
 * Also `GET /dead-letters`: the dead-letter list as JSON `{ items }`, and `GET /stats`: `{ sent, depth, visible }`
 * (messages sent since start, in the queue, receivable now), for a developer, a bench or an acceptance test
 * looking from outside.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalDeliveryQueue } from './queue';
import { MAX_DELAY_SECONDS } from '../../../lib/webhooks/queue';
import { closeGracefully, listen, readBody } from '../http-server';

/** SQS's largest message (256 KiB) plus room for the request's other fields. */
const MAX_REQUEST_BYTES = 300 * 1024;
const MAX_MESSAGE_BYTES = 256 * 1024;
const JSON_1_0 = 'application/x-amz-json-1.0';
/** SQS's rule for a `MessageGroupId` (on a standard queue it makes the queue fair: the group is the tenant). */
const MESSAGE_GROUP_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

export interface SqsFront {
  /** The queue's URL, for `WEBHOOK_QUEUE_URL`. */
  queueUrl: string;
  port: number;
  close(): Promise<void>;
}

class SqsError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly queryError: string,
    message: string,
  ) {
    super(message);
  }
}

const invalidParameter = (message: string) => new SqsError(400, 'com.amazonaws.sqs#InvalidParameterValue', 'InvalidParameterValue;Sender', message);

/**
 * `queue` is the delivery queue (its dead letters and stats are the ones served); `otherQueues` are more queues the
 * same front takes messages for, by name (the settlement continuations).
 */
export async function startSqsFront(options: {
  port: number;
  host?: string;
  queue: LocalDeliveryQueue;
  queueName: string;
  otherQueues?: Readonly<Record<string, LocalDeliveryQueue>>;
}): Promise<SqsFront> {
  const queuePath = `/000000000000/${options.queueName}`;
  const queues = new Map<string, LocalDeliveryQueue>([[queuePath, options.queue], ...Object.entries(options.otherQueues ?? {}).map(([name, queue]): [string, LocalDeliveryQueue] => [`/000000000000/${name}`, queue])]);
  const server = createServer((req, res) => {
    handle(req, res, options.queue, queues).catch((error: unknown) => {
      if (error instanceof SqsError) return sendError(res, error);
      console.error('[sqs-front] request failed', error);
      sendError(res, new SqsError(500, 'com.amazonaws.sqs#InternalError', 'InternalError;Receiver', 'We encountered an internal error. Please try again.'));
    });
  });
  await listen(server, options.port, options.host ?? '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    queueUrl: `http://127.0.0.1:${port}${queuePath}`,
    port,
    close: () => closeGracefully(server, { graceMs: 2_000 }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, queue: LocalDeliveryQueue, queues: ReadonlyMap<string, LocalDeliveryQueue>): Promise<void> {
  if (req.method === 'GET' && req.url === '/dead-letters') {
    return sendJson(res, 200, { items: queue.deadLetters() }, 'application/json');
  }
  if (req.method === 'GET' && req.url === '/stats') return sendJson(res, 200, queue.stats(), 'application/json');
  const body = await readBody(req, MAX_REQUEST_BYTES);
  const target = req.headers['x-amz-target'];
  if (req.method !== 'POST' || typeof target !== 'string' || !target.startsWith('AmazonSQS.')) {
    throw new SqsError(400, 'com.amazon.coral.service#UnknownOperationException', 'UnknownOperation;Sender', 'Expected a POST with X-Amz-Target: AmazonSQS.<Operation>');
  }
  if (target !== 'AmazonSQS.SendMessage') {
    throw new SqsError(400, 'com.amazonaws.sqs#UnsupportedOperation', 'AWS.SimpleQueueService.UnsupportedOperation;Sender', `${target.slice('AmazonSQS.'.length)} is not supported by the local queue`);
  }
  if (body === 'too-large') throw invalidParameter(`Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`);
  let input: { QueueUrl?: unknown; MessageBody?: unknown; DelaySeconds?: unknown; MessageGroupId?: unknown };
  try {
    input = JSON.parse(body.toString('utf8')) as typeof input;
  } catch {
    throw new SqsError(400, 'com.amazon.coral.service#SerializationException', 'SerializationException;Sender', 'The request body is not valid JSON.');
  }
  const destination = typeof input.QueueUrl === 'string' ? queues.get(queuePathOf(input.QueueUrl)) : undefined;
  if (destination === undefined) {
    throw new SqsError(400, 'com.amazonaws.sqs#QueueDoesNotExist', 'AWS.SimpleQueueService.NonExistentQueue;Sender', 'The specified queue does not exist.');
  }
  if (typeof input.MessageBody !== 'string' || input.MessageBody.length === 0) {
    throw new SqsError(400, 'com.amazonaws.sqs#MissingParameter', 'MissingParameter;Sender', 'The request must contain the parameter MessageBody.');
  }
  if (Buffer.byteLength(input.MessageBody, 'utf8') > MAX_MESSAGE_BYTES) throw invalidParameter(`Message must be shorter than ${MAX_MESSAGE_BYTES} bytes.`);
  const delay = input.DelaySeconds ?? 0;
  if (typeof delay !== 'number' || !Number.isInteger(delay) || delay < 0 || delay > MAX_DELAY_SECONDS) {
    throw invalidParameter(`Value ${String(delay)} for parameter DelaySeconds is invalid. Reason: must be between 0 and ${MAX_DELAY_SECONDS}, if provided.`);
  }
  const groupId = input.MessageGroupId;
  if (groupId !== undefined && (typeof groupId !== 'string' || !MESSAGE_GROUP_ID.test(groupId))) {
    throw invalidParameter('Value for parameter MessageGroupId is invalid. Reason: must be 1 to 128 alphanumeric or punctuation characters.');
  }
  const sent = destination.sendMessage(input.MessageBody, delay, groupId);
  sendJson(res, 200, { MessageId: sent.messageId, MD5OfMessageBody: sent.md5OfMessageBody });
}

/** The path a queue URL names (any host: a client may say localhost or 127.0.0.1); '' for no URL. */
function queuePathOf(queueUrl: string): string {
  try {
    return new URL(queueUrl).pathname.replace(/\/$/, '');
  } catch {
    return '';
  }
}

function sendJson(res: ServerResponse, status: number, value: unknown, contentType = JSON_1_0, headers: Record<string, string> = {}): void {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  res.writeHead(status, { 'content-type': contentType, 'content-length': body.length, 'x-amzn-requestid': randomUUID(), ...headers });
  res.end(body);
}

/** An error as SQS's JSON protocol sends it: `__type` and `message`, plus the query-compatible code header. */
function sendError(res: ServerResponse, error: SqsError): void {
  sendJson(res, error.status, { __type: error.type, message: error.message }, JSON_1_0, { 'x-amzn-query-error': error.queryError });
}
