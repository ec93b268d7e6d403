/**
 * Where an automation's answer goes besides its chat and the consoles: a channel conversation (e.g. a Telegram chat).
 * The channels module provides AUTOMATION_DELIVERY when it is present; without a provider, runs deliver nothing beyond
 * their chat and the `automation_run` notification.
 */
import type { AutomationDelivery as AutomationDeliverySettings } from '@cashcode/contracts';

/** Injection token of the AutomationDelivery (optional). */
export const AUTOMATION_DELIVERY = Symbol('AutomationDelivery');

export type DeliveryTarget = NonNullable<AutomationDeliverySettings['channel']>;

export interface AutomationDelivery {
  /** Sends `text` to the target conversation; a rejection is logged and never fails the run. */
  deliver(target: DeliveryTarget, text: string): Promise<void>;
}
