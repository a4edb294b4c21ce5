/**
 * `docs/api.md`: the API reference as Markdown, rendered from the OpenAPI document (`document.ts`), so a clone
 * carries the contract partners integrate against without a browser: every route with its security, parameters,
 * body fields (required ones marked), answers and error codes, then every resource's fields. `npm run openapi`
 * writes it beside `docs/openapi.json`; a test fails when it differs from what the document renders.
 */
import { fileURLToPath } from 'node:url';

export const API_MARKDOWN_FILE = fileURLToPath(new URL('../../docs/api.md', import.meta.url));

type Schema = {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  additionalProperties?: Schema | boolean;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
  default?: unknown;
};

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
}

interface Operation {
  summary: string;
  description?: string;
  tags: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> };
  responses: Record<
    string,
    { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema?: Schema; examples?: Record<string, { value: { code: string } }> }> }
  >;
}

interface Document {
  info: { title: string; description: string };
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const SECURITY: Record<string, string> = {
  apiKey: '`x-api-key`',
  bodySignature: '`x-svc-hmac` (HMAC-SHA256 of the raw body)',
  adminBearer: '`Authorization: Bearer <admin JWT>`',
  processorSignature: "`processor-signature` (the processor's signature of the body)",
};

/** The error bodies: an answer's body is what else its status's schema offers. */
const ERROR_SCHEMAS = new Set(['#/components/schemas/Error', '#/components/schemas/ValidationError']);

/** The members of a union that are objects with fields of their own (not named resources). */
const objectMembers = (schema: Schema) => (schema.anyOf ?? schema.oneOf ?? []).filter((member) => member.$ref === undefined && member.properties !== undefined);

/** `|` and line breaks would end a table cell. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/** A schema's type in a few words: `string`, `Transaction`, `array of Client`, `"a" \| "b"`, ... */
function typeOf(schema: Schema): string {
  if (schema.$ref !== undefined) return `[${refName(schema.$ref)}](#${refName(schema.$ref).toLowerCase()})`;
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum !== undefined) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(', ');
  const union = schema.anyOf ?? schema.oneOf;
  if (union !== undefined) return union.map(typeOf).join(' or ');
  if (schema.type === 'array' && schema.items !== undefined) return `array of ${typeOf(schema.items)}`;
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  return schema.type ?? 'any';
}

/** The rules a value must keep, in a few words. */
function rulesOf(schema: Schema): string {
  const rules: string[] = [];
  if (schema.format !== undefined) rules.push(schema.format);
  if (schema.minLength !== undefined || schema.maxLength !== undefined) rules.push(`${schema.minLength ?? 0}-${schema.maxLength ?? '…'} characters`);
  if (schema.minimum !== undefined || schema.maximum !== undefined) rules.push(`${schema.minimum ?? '…'} to ${schema.maximum ?? '…'}`);
  if (schema.exclusiveMinimum !== undefined) rules.push(`greater than ${schema.exclusiveMinimum}`);
  if (schema.pattern !== undefined && schema.format === undefined) rules.push(`pattern \`${schema.pattern}\``);
  if (schema.default !== undefined) rules.push(`default \`${JSON.stringify(schema.default)}\``);
  return rules.join('; ');
}

function fieldTable(schema: Schema, rows: string[][] = [], prefix = ''): string[][] {
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    const description = [field.description ?? '', rulesOf(field)].filter((part) => part !== '').join('. ');
    rows.push([`\`${path}\``, typeOf(field), required.has(name) ? 'yes' : '', description]);
    // Nested objects (not a named resource) are listed by their path; so are those a union offers.
    if (field.$ref === undefined && field.properties !== undefined) fieldTable(field, rows, `${path}.`);
    for (const member of objectMembers(field)) fieldTable(member, rows, `${path}.`);
    if (field.type === 'array' && field.items?.properties !== undefined && field.items.$ref === undefined) fieldTable(field.items, rows, `${path}[].`);
  }
  return rows;
}

const table = (header: string[], rows: string[][]) =>
  rows.length === 0 ? [] : [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`), ''];

/** The headers an answer names beyond the request id every answer carries. */
const headersOf = (response: Operation['responses'][string]) =>
  Object.keys(response.headers ?? {})
    .filter((name) => name !== 'x-request-id')
    .map((name) => `\`${name}\``)
    .join(', ');

function operationSection(method: string, path: string, operation: Operation): string[] {
  const lines = [`### ${operation.summary}`, '', `\`${method.toUpperCase()} ${path}\``, ''];
  if (operation.description !== undefined) lines.push(operation.description, '');
  const security = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement).map((name) => SECURITY[name] ?? name));
  lines.push(`**Auth:** ${security.length === 0 ? 'none' : security.join(' and ')}`, '');
  const parameters = (operation.parameters ?? []).map((parameter) => [
    `\`${parameter.name}\``,
    parameter.in,
    parameter.schema === undefined ? '' : typeOf(parameter.schema),
    parameter.required === true ? 'yes' : '',
    [parameter.description ?? '', parameter.schema === undefined ? '' : rulesOf(parameter.schema)].filter((part) => part !== '').join('. '),
  ]);
  if (parameters.length > 0) lines.push('**Parameters**', '', ...table(['Name', 'In', 'Type', 'Required', 'Description'], parameters));
  const body = operation.requestBody?.content['application/json'];
  if (body !== undefined) {
    lines.push('**Body** (JSON)', '');
    lines.push(...(body.schema.$ref === undefined ? table(['Field', 'Type', 'Required', 'Description'], fieldTable(body.schema)) : [typeOf(body.schema), '']));
    if (body.example !== undefined) lines.push('```json', JSON.stringify(body.example, null, 2), '```', '');
  }
  const answers: string[][] = [];
  const errors: string[][] = [];
  for (const [status, response] of Object.entries(operation.responses)) {
    const content = Object.entries(response.content ?? {})[0];
    const examples = content?.[1].examples;
    if (examples !== undefined) {
      for (const code of Object.keys(examples)) errors.push([`\`${code}\``, status]);
      const schema = content?.[1].schema;
      const alongside = schema?.anyOf?.find((option) => option.$ref === undefined || !ERROR_SCHEMAS.has(option.$ref));
      if (alongside !== undefined) answers.push([status, typeOf(alongside), response.description, headersOf(response)]);
      else if (headersOf(response) !== '') answers.push([status, 'an error', response.description, headersOf(response)]);
    } else {
      answers.push([
        status,
        content?.[1].schema === undefined ? `${content?.[0] ?? 'no body'}` : `${typeOf(content[1].schema)} (${content[0]})`,
        response.description,
        headersOf(response),
      ]);
    }
  }
  lines.push('**Answers**', '', ...table(['Status', 'Body', 'When', 'Headers'], answers));
  if (errors.length > 0) lines.push('**Errors**', '', ...table(['Code', 'Status'], errors));
  return lines;
}

/** The Markdown reference of `document` (an OpenAPI 3.1 document as `document.ts` builds it). */
export function renderApiMarkdown(input: Record<string, unknown>): string {
  const document = input as unknown as Document;
  const lines = [
    `# ${document.info.title}: API reference`,
    '',
    '<!-- Written by `npm run openapi` from the OpenAPI document (docs/openapi.json); edit the routes, not this file. -->',
    '',
    document.info.description,
    '',
    'Browse it at `/api/v1/docs` on a running service. Error bodies are `{ "error", "code" }` ([Error](#error)), VALIDATION_ERROR\'s',
    '`{ "error", "code", "details" }` ([ValidationError](#validationerror)); every answer carries `x-request-id`. HEAD answers as GET',
    'does, without a body.',
    '',
  ];
  // The partner webhooks' "path" is the endpoint the partner registered.
  const items = [
    ...Object.entries(document.paths),
    ...Object.entries(document.webhooks ?? {}).map(([, item]) => ['<your webhook endpoint URL>', item] as const),
  ];
  for (const tag of document.tags) {
    const operations = items.flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method, operation]) => method !== 'head' && operation.tags.includes(tag.name))
        .map(([method, operation]) => ({ method, path, operation })),
    );
    if (operations.length === 0) continue;
    lines.push(`## ${tag.name}`, '', tag.description, '');
    for (const { method, path, operation } of operations) lines.push(...operationSection(method, path, operation));
  }
  lines.push('## Resources', '');
  for (const [name, schema] of Object.entries(document.components.schemas).sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`### ${name}`, '');
    if (schema.description !== undefined) lines.push(schema.description, '');
    const union = schema.anyOf ?? schema.oneOf;
    if (union !== undefined) lines.push(`One of: ${union.map((member, index) => (objectMembers(schema).includes(member) ? `form ${index + 1} below` : typeOf(member))).join('; ')}.`, '');
    lines.push(...table(['Field', 'Type', 'Always', 'Description'], fieldTable(schema)));
    (union ?? []).forEach((member, index) => {
      if (!objectMembers(schema).includes(member)) return;
      lines.push(`Form ${index + 1}${member.description === undefined ? '' : `: ${member.description}`}`, '');
      lines.push(...table(['Field', 'Type', 'Always', 'Description'], fieldTable(member)));
    });
  }
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
