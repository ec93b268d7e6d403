import { Module } from '@nestjs/common';
import { ExecSandboxController } from './exec-sandbox.controller';
import { ExecSandboxService } from './exec-sandbox.service';

/** The exec sandbox (bubblewrap when it works) shared by the exec tool, the health probe and the settings route. */
@Module({
  providers: [ExecSandboxService],
  controllers: [ExecSandboxController],
  exports: [ExecSandboxService],
})
export class SandboxModule {}
