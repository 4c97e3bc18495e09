import { isDevOrTest, type Logger } from '@lms/shared';
import type { Config } from '../config';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

/**
 * Without SMTP_URL: in development and test the mail is written to the log, links and all (demos read
 * them there). Anywhere else the link is a key to the account (a reset link takes it over), so only the
 * fact that a mail was not sent is logged, never its text.
 */
export function logMailer(logger: Logger, nodeEnv = 'development'): Mailer {
  const devOrTest = isDevOrTest(nodeEnv);
  return {
    async send(mail) {
      if (devOrTest) logger.info({ mail }, 'mail (no SMTP_URL set)');
      else logger.warn({ mail: { to: mail.to, subject: mail.subject } }, 'mail not sent: SMTP_URL is not set');
    },
  };
}

/** Said once at start outside development and test: without SMTP_URL no reset or verification mail leaves. */
export function warnMailNotSent(config: Pick<Config, 'nodeEnv' | 'smtpUrl'>, logger: Pick<Logger, 'warn'>): void {
  if (config.smtpUrl || isDevOrTest(config.nodeEnv)) return;
  const what = 'password-reset and verification mails are not sent (each is logged as not sent)';
  logger.warn({}, `SMTP_URL is not set: ${what}`);
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
    m = config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom) : logMailer(deps.logger, config.nodeEnv);
    cache.set(deps, m);
  }
  return m;
}
