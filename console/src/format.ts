/** Amounts as the API gives them: numbers in major units of their currency (2 decimals for USD, none for JPY). */
export const money = (amount: number | null, currency: string) =>
  amount === null ? '—' : new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount);

export const percent = (value: number | null) => (value === null ? '—' : `${value} %`);

export const when = (timestamp: string) => new Date(timestamp).toLocaleString();
