import { Module } from '@nestjs/common';

/** Placeholder: filled in by the walking-skeleton work. */
@Module({})
export class CommonModule {}
