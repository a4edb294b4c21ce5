/**
 * The shop behind the example's checkout page (`public/checkout.html`): products priced on the server, and an order
 * made from one when the buyer clicks Buy. The browser names a product and may give an email; the price, currency
 * and merchant come from here. A partner's own cart or order service takes this place.
 */
import { randomBytes } from 'node:crypto';
import type { Order } from './orders';

export interface Product {
  sku: string;
  name: string;
  /** The merchant selling it: the `client_id` registered with the service. */
  client_id: string;
  /** Major units (`25.00`). */
  amount: number;
  currency: string;
  statement_descriptor_suffix?: string;
}

/** Where a new order is kept: `InMemoryOrders` here, the partner's order table in production. */
export interface OrderSink {
  put(order: Order): void;
}

export type OrderRequest = { outcome: 'created'; order: Order; product: Product } | { outcome: 'refused'; status: 400 | 404; error: string };

/**
 * The address rule the service applies to a checkout's `email` (zod's `z.email()`: ASCII, a dotted domain), so an
 * order the shop accepts is never refused at checkout.
 */
const EMAIL = /^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$/;
const DEFAULT_EMAIL = 'buyer@example.com';

export class Shop {
  private readonly bySku: ReadonlyMap<string, Product>;

  constructor(
    readonly products: readonly Product[],
    private readonly orders: OrderSink,
  ) {
    this.bySku = new Map(products.map((product) => [product.sku, product]));
  }

  /**
   * A new order for one unit of `sku`, under a fresh `partner_reference` (a new order is a new payment; paying
   * the same order again replays its payment). Only `sku` and `email` are read from the browser's request.
   */
  order(request: Record<string, unknown>): OrderRequest {
    const { sku, email } = request;
    if (typeof sku !== 'string') return { outcome: 'refused', status: 400, error: 'sku (a product id, a string) is required' };
    const product = this.bySku.get(sku);
    if (product === undefined) return { outcome: 'refused', status: 404, error: 'No such product' };
    if (email !== undefined && (typeof email !== 'string' || !EMAIL.test(email))) return { outcome: 'refused', status: 400, error: 'email is not an email address' };
    const order: Order = {
      partner_reference: `order-${Date.now().toString(36)}-${randomBytes(8).toString('hex')}`,
      client_id: product.client_id,
      amount: product.amount,
      currency: product.currency,
      email: typeof email === 'string' ? email : DEFAULT_EMAIL,
      ...(product.statement_descriptor_suffix === undefined ? {} : { statement_descriptor_suffix: product.statement_descriptor_suffix }),
    };
    this.orders.put(order);
    return { outcome: 'created', order, product };
  }
}
