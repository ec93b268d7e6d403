import { Global, Module } from '@nestjs/common';
import { AUTOMATION_DELIVERY } from '../automations/automation-delivery';
import { ChannelAutomationDelivery } from './channel-automation-delivery';
import { ChannelsModule } from './channels.module';

/**
 * Provides AUTOMATION_DELIVERY to the whole app (the automations module asks for it as an optional token, so neither
 * module imports the other's module): automation runs delivered to a channel conversation.
 */
@Global()
@Module({
  imports: [ChannelsModule],
  providers: [ChannelAutomationDelivery, { provide: AUTOMATION_DELIVERY, useExisting: ChannelAutomationDelivery }],
  exports: [AUTOMATION_DELIVERY],
})
export class ChannelDeliveryModule {}
