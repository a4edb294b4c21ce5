export default async function globalTeardown(): Promise<void> {
  await globalThis.__RAILS_SANDBOX__?.close();
  await globalThis.__PROCESSOR_SANDBOX__?.close();
  await globalThis.__DYNAMODB_LOCAL__?.stop();
}
