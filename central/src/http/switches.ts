import type { RequestHandler } from 'express';
import { errorEnvelope } from '@lms/shared';
import type { Config } from '../config';

/** PUT /log/import is off unless LOG_IMPORT_ENABLED: answer 404 before authentication and before reading the body. */
export const logImportSwitch: RequestHandler = (req, res, next) => {
  const config = req.app.locals.config as Config;
  if (!config.logImportEnabled) {
    res.status(404).json(errorEnvelope(`Cannot ${req.method} ${req.path}`));
    return;
  }
  next();
};
