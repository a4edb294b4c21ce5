/**
 * The partner's own orders: what is being paid for, priced on the server. `POST /checkout` takes only the order id
 * from the browser and reads everything the payment needs (merchant, amount, currency, buyer) from here, so a
 * buyer cannot set the price by editing the request. Behind a small interface: a partner reads their own order
 * table (or cart service) instead of the in-memory map.
 */

export interface Order {
  /** The order id, sent to the service as the immutable `partner_reference`. */
  partner_reference: string;
  /** The merchant selling it: the `client_id` registered with the service. */
  client_id: string;
  /** Major units (`49.99`), computed by the partner's shop, never by the browser. */
  amount: number;
  /** ISO 4217 code. */
  currency: string;
  /** The buyer's email, for the processor's receipt. */
  email: string;
  /** What the buyer's card statement shows after the merchant's name; omitted for none. */
  statement_descriptor_suffix?: string;
}

export interface OrderCatalogue {
  get(partnerReference: string): Promise<Order | undefined>;
}

/** For the example and its tests; data is lost on restart. Returns copies, as a database read would. */
export class InMemoryOrders implements OrderCatalogue {
  private readonly orders = new Map<string, Order>();

  constructor(orders: readonly Order[] = []) {
    for (const order of orders) this.put(order);
  }

  /** Adds the order, or replaces the one with its `partner_reference` (the shop changed it). */
  put(order: Order): void {
    this.orders.set(order.partner_reference, { ...order });
  }

  async get(partnerReference: string): Promise<Order | undefined> {
    const order = this.orders.get(partnerReference);
    return order === undefined ? undefined : { ...order };
  }
}
