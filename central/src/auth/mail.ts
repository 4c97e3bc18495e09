import type { Logger } from '@lms/shared';
import type { Config } from '../config';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/** Without SMTP_URL the mail is written to the log (development, demos); links stay usable from there. */
export function logMailer(logger: Logger): Mailer {
  return {
    async send(mail) {
      logger.info({ mail }, 'mail (no SMTP_URL set)');
    },
  };
}

/** SMTP through nodemailer, loaded only when SMTP_URL is set. */
export function smtpMailer(smtpUrl: string, from: string): Mailer {
  let transport: Promise<{ sendMail(o: object): Promise<unknown> }> | undefined;
  return {
    async send(mail) {
      transport ??= import('nodemailer').then((m) => m.createTransport(smtpUrl));
      await (await transport).sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    },
  };
}

const cache = new WeakMap<object, Mailer>();
export function mailerOf(config: Config, deps: { mailer?: Mailer; logger: Logger }): Mailer {
  if (deps.mailer) return deps.mailer;
  let m = cache.get(deps);
  if (!m) {
    m = config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom) : logMailer(deps.logger);
    cache.set(deps, m);
  }
  return m;
}
