import type { BrowserStatus } from '@cashcode/contracts';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** `GET /api/health` → `browser` (additive): whether the `browser` tool is offered and how Chromium is confined. */
export class BrowserStatusDto implements BrowserStatus {
  @ApiProperty({ description: 'the browser tool is offered to the model' })
  enabled!: boolean;

  @ApiPropertyOptional({ example: '/usr/bin/chromium', description: 'the Chromium executable' })
  executable?: string;

  @ApiProperty({ description: 'Chromium runs inside bubblewrap, without a network of its own' })
  sandboxed!: boolean;

  @ApiProperty({ description: 'page requests may reach private and loopback addresses (CASHCODE_FETCH_ALLOW_PRIVATE)' })
  allow_private!: boolean;

  @ApiPropertyOptional({ example: 'Chromium was not found at /usr/bin/chromium', description: 'why the tool is not offered' })
  reason?: string;
}
