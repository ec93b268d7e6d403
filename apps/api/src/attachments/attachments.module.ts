import { Module } from '@nestjs/common';
import { AttachmentsController, AttachmentUploadInterceptor } from './attachments.controller';
import { AttachmentsService } from './attachments.service';

/** Chat attachments: the upload REST endpoints and the files a message refers to (openspec chat). */
@Module({
  controllers: [AttachmentsController],
  providers: [AttachmentsService, AttachmentUploadInterceptor],
  exports: [AttachmentsService],
})
export class AttachmentsModule {}
