import { API_PATHS, type AttachmentUploadResponse } from '@cashcode/contracts';
import {
  Controller,
  Delete,
  HttpCode,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  Param,
  Post,
  UploadedFiles,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { FilesInterceptor } from '@nestjs/platform-express';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOperation,
  ApiParam,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import type { Observable } from 'rxjs';
import { ApiProblemResponses } from '../common/problem-details';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { ChatIdPipe } from '../memory/chat-id.pipe';
import { AttachmentError } from './attachments.errors';
import { AttachmentsService, type UploadedAttachmentFile } from './attachments.service';

/** the multipart field holding the files */
export const ATTACHMENT_FIELD = 'files';

const CHAT_ID_PARAM = {
  name: 'chat_id',
  description: 'chat id: 1–64 characters from A–Z, a–z, 0–9, `_`, `:` and `-`',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_:-]{1,64}$' },
} as const;

class AttachmentReceiptDto {
  @ApiProperty({ example: 'report.pdf', description: 'sanitised file name; a collision gets a `-1`, `-2`, … suffix' })
  name!: string;

  @ApiProperty({ example: 'attachments/chat-1/report.pdf', description: 'workspace-relative path (what the message frame sends)' })
  path!: string;

  @ApiProperty({ example: 1024, description: 'bytes' })
  size!: number;

  @ApiProperty({ example: 'image/png', description: 'from the magic bytes: an image type, `text/plain` or `application/octet-stream`' })
  mime!: string;
}

class AttachmentUploadResponseDto implements AttachmentUploadResponse {
  @ApiProperty({ type: [AttachmentReceiptDto] })
  attachments!: AttachmentReceiptDto[];
}

function multerCode(error: HttpException): string | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return typeof cause === 'object' && cause !== null && 'code' in cause ? String((cause as { code: unknown }).code) : undefined;
}

/**
 * Receives the multipart upload with the configured limits (memory storage: at most CASHCODE_ATTACHMENT_MAX_FILES files
 * of CASHCODE_ATTACHMENT_MAX_BYTES each are held) and turns multer's limit errors into the attachment error codes.
 */
@Injectable()
export class AttachmentUploadInterceptor implements NestInterceptor {
  private readonly multer: NestInterceptor;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly service: AttachmentsService,
  ) {
    const Multer = FilesInterceptor(ATTACHMENT_FIELD, config.attachmentMaxFiles, {
      // browsers send UTF-8 file names; busboy would read them as latin1 by default
      defParamCharset: 'utf8',
      limits: { fileSize: config.attachmentMaxBytes, files: config.attachmentMaxFiles, fields: 8, parts: config.attachmentMaxFiles + 8 },
    });
    this.multer = new Multer({});
  }

  async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
    try {
      return await this.multer.intercept(context, next);
    } catch (error) {
      throw this.translate(error);
    }
  }

  private translate(error: unknown): unknown {
    if (!(error instanceof HttpException)) return error;
    switch (multerCode(error)) {
      case 'LIMIT_FILE_SIZE':
        return this.service.tooLargeUnnamed();
      case 'LIMIT_FILE_COUNT':
        return this.service.tooMany();
      case 'LIMIT_UNEXPECTED_FILE':
        return new AttachmentError('attachment_field_invalid', `files must be sent in the multipart field \`${ATTACHMENT_FIELD}\``);
      default:
        // anything else multer or busboy refused is a body that cannot be parsed (their messages name no host detail)
        return error.getStatus() === 400 ? new AttachmentError('multipart_invalid', `the multipart body cannot be read: ${error.message}`) : error;
    }
  }
}

/** `/api/sessions/{chat_id}/attachments` (openspec chat "Requirement: Attachments"). */
@ApiTags('sessions')
@Controller(API_PATHS.sessions)
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  @Post(':chat_id/attachments')
  @UseInterceptors(AttachmentUploadInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiParam(CHAT_ID_PARAM)
  @ApiBody({
    schema: {
      type: 'object',
      properties: { [ATTACHMENT_FIELD]: { type: 'array', items: { type: 'string', format: 'binary' } } },
      required: [ATTACHMENT_FIELD],
    },
  })
  @ApiOperation({
    summary: 'Upload files for a chat message',
    description:
      `Multipart field \`${ATTACHMENT_FIELD}\` (one or more files). They are stored in the workspace at ` +
      '`attachments/<chat_id>/<name>` (mode 0600) so tools can open them; send their `path`s in the message frame\'s ' +
      '`attachments` field. Names are sanitised (last path part only, no control characters, no leading dots, at most ' +
      '120 bytes) and a name already taken gets a `-1`, `-2`, … suffix. Limits: CASHCODE_ATTACHMENT_MAX_BYTES per file ' +
      '(413 `attachment_too_large`), CASHCODE_ATTACHMENT_MAX_REQUEST_BYTES per request (413 `attachments_too_large`), ' +
      'CASHCODE_ATTACHMENT_MAX_FILES files (422 `attachment_too_many`); an empty file is 422 `attachment_empty`, a ' +
      'name with nothing usable 422 `attachment_invalid_name`, no file 422 `attachment_missing`. All or nothing.',
  })
  @ApiCreatedResponse({ type: AttachmentUploadResponseDto })
  @ApiProblemResponses(400, 413, 422)
  async upload(
    @Param('chat_id', ChatIdPipe) chatId: string,
    @UploadedFiles() files: UploadedAttachmentFile[] | undefined,
  ): Promise<AttachmentUploadResponse> {
    return { attachments: await this.attachments.store(chatId, files ?? []) };
  }

  @Delete(':chat_id/attachments/:name')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiParam(CHAT_ID_PARAM)
  @ApiParam({ name: 'name', description: 'the stored (sanitised) file name, as the upload answered it' })
  @ApiOperation({ summary: 'Remove an uploaded file before its message is sent' })
  @ApiNoContentResponse({ description: 'removed' })
  @ApiProblemResponses(400, 404)
  async remove(@Param('chat_id', ChatIdPipe) chatId: string, @Param('name') name: string): Promise<void> {
    await this.attachments.remove(chatId, name);
  }
}
