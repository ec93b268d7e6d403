import type { ExecSandboxMode, ExecSandboxStatus } from '@cashcode/contracts';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class ExecSandboxStatusDto implements ExecSandboxStatus {
  @ApiProperty({ enum: ['auto', 'bwrap', 'off'], example: 'auto', description: 'the configured mode (CASHCODE_EXEC_SANDBOX)' })
  mode!: ExecSandboxMode;

  @ApiProperty({ example: true, description: 'true when exec commands run confined right now' })
  active!: boolean;

  @ApiProperty({ enum: ['bwrap'], nullable: true, example: 'bwrap', description: '`bwrap` when active, else null' })
  kind!: 'bwrap' | null;

  @ApiProperty({
    example: true,
    description: 'network reachable from exec commands (false only inside the sandbox with CASHCODE_EXEC_NETWORK=off)',
  })
  network!: boolean;

  @ApiPropertyOptional({
    example: 'bubblewrap (bwrap) is not installed (not found on PATH)',
    description: 'why the sandbox is not active (absent when active)',
  })
  reason?: string;
}
