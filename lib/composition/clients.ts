/** Wiring for the partner's merchants: the table. */
import * as clients from '../store/clients';
import type { ClientStore } from '../use-cases/clients';

export const clientStore: ClientStore = clients;
