/**
 * The admin console's platform-wide API keys in headless Chromium: in the API keys section, "Platform-wide
 * (no partner)" lists the keys of no partner (`GET /admin/api-keys`), issues one (shown once) and revokes it after
 * a confirmation; "A partner" goes back to the partner picker, and the partners section's actions are unchanged.
 * No request leaves 127.0.0.1, no page or console error, no answer of 400 or more. Needs Debian's Chromium at
 * /usr/bin/chromium (as admin-console-browser.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { TestApi } from '../../support/api';
import { buildConsole, type ConsoleBrowser, openConsoleBrowser, signIn } from '../../support/console-browser';

let api: TestApi | undefined;
let browser: ConsoleBrowser | undefined;
let page: Page;

beforeAll(async () => {
  await buildConsole();
  api = await TestApi.start();
  browser = await openConsoleBrowser(api, 'admin-console-platform-keys');
  page = browser.page;
  await signIn(browser, api.adminToken);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('platform-wide API keys in the admin console', () => {
  it(
    'issues a platform-wide key shown once, lists it with the platform keys and revokes it; the partner view is one choice away',
    async () => {
      // Arrange: the partners section's row actions, as before; then the API keys section, platform-wide.
      const partner = await api!.createPartner();
      await page.reload({ waitUntil: 'load' });
      const partnerRow = page.getByRole('table', { name: 'Partners' }).getByRole('row').filter({ hasText: partner.partnerId });
      await partnerRow.waitFor();
      const rowActions = await partnerRow.getByRole('button').allTextContents();
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { name: 'API keys', level: 2 }).waitFor();
      await page.getByLabel('Platform-wide (no partner)').check();

      // Act: issue a key, read it once, then revoke it from its row.
      await page.getByRole('button', { name: 'Issue a platform-wide key' }).click();
      const issued = page.getByRole('region', { name: 'New API key' });
      const keyId = ((await issued.locator('h3 code').textContent()) ?? '').trim();
      const apiKey = (await issued.getByLabel('API key (x-api-key)').textContent()) ?? '';
      const keyRow = page.getByRole('table', { name: 'Platform-wide API keys' }).getByRole('row').filter({ hasText: keyId });
      await keyRow.waitFor();
      const listedWhileIssued = (await api!.admin('GET', '/admin/api-keys')).body.items.map((key: { key_id: string }) => key.key_id);
      await issued.getByRole('button', { name: 'I have copied them' }).click();
      page.once('dialog', (dialog) => void dialog.accept());
      await keyRow.getByRole('button', { name: 'Revoke' }).click();
      await keyRow.waitFor({ state: 'detached' });
      const listedAfterRevoke = (await api!.admin('GET', '/admin/api-keys')).body.items.map((key: { key_id: string }) => key.key_id);
      await page.getByLabel('A partner').check();
      await page.getByRole('option', { name: 'Choose a partner…' }).waitFor({ state: 'attached' });

      // Assert
      expect({
        rowActions,
        keyId: /^key_/.test(keyId),
        apiKey: apiKey.startsWith('svc_platform_'),
        listedWhileIssued: listedWhileIssued.includes(keyId),
        listedAfterRevoke: listedAfterRevoke.includes(keyId),
        outsideRequests: browser!.outsideRequests(),
        failedResponses: browser!.failedResponses,
        pageErrors: browser!.pageErrors,
        consoleErrors: browser!.consoleErrors,
      }).toEqual({
        rowActions: ['Suspend', 'Edit', 'API keys'],
        keyId: true,
        apiKey: true,
        listedWhileIssued: true,
        listedAfterRevoke: false,
        outsideRequests: [],
        failedResponses: [],
        pageErrors: [],
        consoleErrors: [],
      });
      const origin = browser!.origin;
      expect(browser!.apiCalls()).toEqual(
        expect.arrayContaining([`GET ${origin}/api/v1/admin/api-keys`, `POST ${origin}/api/v1/admin/api-keys`, `DELETE ${origin}/api/v1/admin/api-keys/${keyId}`]),
      );
    },
    120_000,
  );
});
