// The words of both log-sync pages, in English and Khmer. `{0}`, `{1}` … are filled in by `t`.

export type Lang = 'en' | 'km';
export const LANGS: readonly Lang[] = ['en', 'km'];

const en = {
  'lang.label': 'Language',
  'signin.title': 'Sign in',
  'signin.user': 'User name',
  'signin.password': 'Password',
  'signin.submit': 'Sign in',
  'signin.busy': 'Signing in…',
  'signin.wrong': 'Wrong user name or password.',
  'signin.notTeacher': 'Sign in with a teacher account.',
  'signin.as': 'Signed in as {0}.',
  'signout': 'Sign out',
  'net.down': 'Cannot reach the server. Check the connection and try again.',
  'session.ended': 'Your sign-in has ended. Sign in again.',
  'error.other': 'Something went wrong ({0}). Try again.',

  'classroom.title': 'Save the classroom log',
  'classroom.intro':
    'Save what learners did on this classroom server as studentlog.zip, then upload it on the central page.',
  'summary.title': 'What the log holds',
  'summary.loading': 'Reading the log…',
  'summary.learners': 'Learners',
  'summary.results': 'Results',
  'summary.answers': 'Answers',
  'summary.progress': 'Progress records',
  'summary.access': 'Sign-ins',
  'summary.dates': 'Dates',
  'summary.noDates': 'No activity yet',
  'summary.size': 'Size',
  'summary.last': 'Last saved',
  'summary.never': 'Never saved from this server',
  'summary.lastBy': '{0} by {1}',
  'save.button': 'Save studentlog.zip',
  'save.progress': 'Saving',
  'save.busy': 'Preparing the file… {0}',
  'save.done': 'Saved studentlog.zip ({0}). Upload it on the central page.',
  'save.failed': 'The log could not be saved ({0}). Try again.',

  'central.title': 'Upload the classroom log',
  'central.intro': 'Pick the studentlog.zip you saved on the classroom page.',
  'upload.file': 'Log file (studentlog.zip)',
  'upload.button': 'Upload',
  'upload.progress': 'Upload',
  'upload.pick': 'Pick a file first.',
  'upload.sending': 'Uploading… {0}',
  'upload.reading': 'Uploaded. Central is reading the log…',
  'result.written': 'Done. Rows written: {0}.',
  'result.breakdown': 'Results: {0}. Answers: {1}. Progress records: {2}. Sign-ins: {3}.',
  'result.learners': 'Learners whose work was saved: {0}.',
  'result.unchanged': 'Nothing changed: central already had everything in this file.',
  'result.empty': 'The file held no activity: nothing was written.',
  'result.otherSchool': 'Learners refused because they belong to another school: {0}. Rows not written: {1}.',
  'result.unknown':
    'Learners refused because central does not know them yet: {0}. Their rows ({1}) are kept and ' +
      'written once they are added.',
  'refused.notLog': 'This is not a log file. Pick the studentlog.zip saved on the classroom page.',
  'refused.off': 'Central does not take logs now (import is switched off). Ask your administrator.',
  'refused.busy': 'Central is busy with other uploads. It will try again by itself in {0} seconds.',
  'refused.unavailable':
    'Central cannot take the log right now (it is not the file). It will try again by itself in {0} seconds.',
  'refused.countdown': 'Trying again in {0} s…',
  'refused.tooLarge': 'The file is too large for central.',
  'refused.store': 'Central could not store the log, so nothing was written. Try again later.',
  'refused.noTeacher': 'This account is no longer on central.',
  'retry.now': 'Trying again…',
};

export type Key = keyof typeof en;

// Short, plain Khmer. Product and file names (studentlog.zip) stay as they are.
const km: Record<Key, string> = {
  'lang.label': 'ភាសា',
  'signin.title': 'ចូលគណនី',
  'signin.user': 'ឈ្មោះអ្នកប្រើ',
  'signin.password': 'ពាក្យសម្ងាត់',
  'signin.submit': 'ចូល',
  'signin.busy': 'កំពុងចូល…',
  'signin.wrong': 'ឈ្មោះអ្នកប្រើ ឬពាក្យសម្ងាត់មិនត្រឹមត្រូវ។',
  'signin.notTeacher': 'សូមចូលដោយគណនីគ្រូ។',
  'signin.as': 'បានចូលជា {0}។',
  'signout': 'ចាកចេញ',
  'net.down': 'មិនអាចភ្ជាប់ទៅម៉ាស៊ីនមេបានទេ។ សូមពិនិត្យការតភ្ជាប់ ហើយព្យាយាមម្ដងទៀត។',
  'session.ended': 'ការចូលរបស់អ្នកបានផុតកំណត់។ សូមចូលម្ដងទៀត។',
  'error.other': 'មានបញ្ហា ({0})។ សូមព្យាយាមម្ដងទៀត។',

  'classroom.title': 'រក្សាទុកកំណត់ត្រាថ្នាក់រៀន',
  'classroom.intro': 'រក្សាទុកសកម្មភាពសិស្សនៅលើម៉ាស៊ីនមេថ្នាក់រៀននេះជា studentlog.zip ' +
    'រួចផ្ទុកវាឡើងនៅទំព័រប្រព័ន្ធកណ្ដាល។',
  'summary.title': 'អ្វីដែលមានក្នុងកំណត់ត្រា',
  'summary.loading': 'កំពុងអានកំណត់ត្រា…',
  'summary.learners': 'សិស្ស',
  'summary.results': 'លទ្ធផល',
  'summary.answers': 'ចម្លើយ',
  'summary.progress': 'កំណត់ត្រាវឌ្ឍនភាព',
  'summary.access': 'ការចូលប្រើ',
  'summary.dates': 'កាលបរិច្ឆេទ',
  'summary.noDates': 'មិនទាន់មានសកម្មភាពទេ',
  'summary.size': 'ទំហំ',
  'summary.last': 'រក្សាទុកចុងក្រោយ',
  'summary.never': 'មិនទាន់បានរក្សាទុកពីម៉ាស៊ីនមេនេះទេ',
  'summary.lastBy': '{0} ដោយ {1}',
  'save.button': 'រក្សាទុក studentlog.zip',
  'save.progress': 'កំពុងរក្សាទុក',
  'save.busy': 'កំពុងរៀបចំឯកសារ… {0}',
  'save.done': 'បានរក្សាទុក studentlog.zip ({0})។ សូមផ្ទុកវាឡើងនៅទំព័រប្រព័ន្ធកណ្ដាល។',
  'save.failed': 'មិនអាចរក្សាទុកកំណត់ត្រាបានទេ ({0})។ សូមព្យាយាមម្ដងទៀត។',

  'central.title': 'ផ្ទុកកំណត់ត្រាថ្នាក់រៀនឡើង',
  'central.intro': 'សូមជ្រើសរើស studentlog.zip ដែលអ្នកបានរក្សាទុកនៅទំព័រថ្នាក់រៀន។',
  'upload.file': 'ឯកសារកំណត់ត្រា (studentlog.zip)',
  'upload.button': 'ផ្ទុកឡើង',
  'upload.progress': 'ការផ្ទុកឡើង',
  'upload.pick': 'សូមជ្រើសរើសឯកសារជាមុនសិន។',
  'upload.sending': 'កំពុងផ្ទុកឡើង… {0}',
  'upload.reading': 'បានផ្ទុកឡើងហើយ។ ប្រព័ន្ធកណ្ដាលកំពុងអានកំណត់ត្រា…',
  'result.written': 'រួចរាល់។ ជួរដែលបានសរសេរ៖ {0}។',
  'result.breakdown': 'លទ្ធផល៖ {0}។ ចម្លើយ៖ {1}។ កំណត់ត្រាវឌ្ឍនភាព៖ {2}។ ការចូលប្រើ៖ {3}។',
  'result.learners': 'សិស្សដែលការងាររបស់ពួកគេត្រូវបានរក្សាទុក៖ {0} នាក់។',
  'result.unchanged': 'គ្មានអ្វីផ្លាស់ប្ដូរទេ៖ ប្រព័ន្ធកណ្ដាលមានទិន្នន័យទាំងអស់ក្នុងឯកសារនេះរួចហើយ។',
  'result.empty': 'ឯកសារនេះគ្មានសកម្មភាពទេ៖ មិនបានសរសេរអ្វីទាំងអស់។',
  'result.otherSchool': 'សិស្សដែលត្រូវបានបដិសេធ ព្រោះជាសិស្សសាលាផ្សេង៖ {0} នាក់។ ជួរដែលមិនបានសរសេរ៖ {1}។',
  'result.unknown':
    'សិស្សដែលត្រូវបានបដិសេធ ព្រោះប្រព័ន្ធកណ្ដាលមិនទាន់ស្គាល់៖ {0} នាក់។ ជួររបស់ពួកគេ ({1}) ត្រូវបានរក្សាទុក ' +
      'ហើយនឹងសរសេរនៅពេលពួកគេត្រូវបានបន្ថែម។',
  'refused.notLog': 'នេះមិនមែនជាឯកសារកំណត់ត្រាទេ។ សូមជ្រើសរើស studentlog.zip ដែលបានរក្សាទុកនៅទំព័រថ្នាក់រៀន។',
  'refused.off': 'ប្រព័ន្ធកណ្ដាលមិនទទួលកំណត់ត្រាឥឡូវនេះទេ (ការនាំចូលត្រូវបានបិទ)។ សូមសួរអ្នកគ្រប់គ្រង។',
  'refused.busy': 'ប្រព័ន្ធកណ្ដាលកំពុងរវល់នឹងការផ្ទុកឡើងផ្សេងទៀត។ វានឹងព្យាយាមម្ដងទៀតដោយខ្លួនឯងក្នុងរយៈពេល {0} វិនាទី។',
  'refused.unavailable':
    'ប្រព័ន្ធកណ្ដាលមិនអាចទទួលកំណត់ត្រានៅពេលនេះបានទេ (មិនមែនដោយសារឯកសារទេ)។ ' +
      'វានឹងព្យាយាមម្ដងទៀតដោយខ្លួនឯងក្នុងរយៈពេល {0} វិនាទី។',
  'refused.countdown': 'នឹងព្យាយាមម្ដងទៀតក្នុងរយៈពេល {0} វិនាទី…',
  'refused.tooLarge': 'ឯកសារនេះធំពេកសម្រាប់ប្រព័ន្ធកណ្ដាល។',
  'refused.store': 'ប្រព័ន្ធកណ្ដាលមិនអាចរក្សាទុកកំណត់ត្រាបានទេ ដូច្នេះមិនបានសរសេរអ្វីទាំងអស់។ ' +
    'សូមព្យាយាមម្ដងទៀតពេលក្រោយ។',
  'refused.noTeacher': 'គណនីនេះលែងមាននៅប្រព័ន្ធកណ្ដាលហើយ។',
  'retry.now': 'កំពុងព្យាយាមម្ដងទៀត…',
};

const STRINGS: Record<Lang, Record<Key, string>> = { en, km };

/** The first of the browser's languages the pages speak; English otherwise. */
export function browserLang(langs: readonly string[]): Lang {
  for (const l of langs) {
    const base = l.toLowerCase().split('-')[0];
    if ((LANGS as readonly string[]).includes(base)) return base as Lang;
  }
  return 'en';
}

export type Arg = string | number;

export function t(lang: Lang, key: Key, args: readonly Arg[] = []): string {
  return STRINGS[lang][key].replace(/\{(\d)\}/g, (_m, i: string) => {
    const v = args[Number(i)];
    return typeof v === 'number' ? new Intl.NumberFormat(lang).format(v) : String(v ?? '');
  });
}

/** Bytes as the teacher reads them: `840 B`, `12.3 KB`, `4.5 MB`. */
export function formatBytes(lang: Lang, n: number): string {
  const f = (v: number, unit: string) =>
    `${new Intl.NumberFormat(lang, { maximumFractionDigits: 1 }).format(v)} ${unit}`;
  if (n < 1024) return f(n, 'B');
  if (n < 1024 * 1024) return f(n / 1024, 'KB');
  return f(n / (1024 * 1024), 'MB');
}

export function formatDate(lang: Lang, iso: string, withTime = false): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  // Browsers without Khmer month names print `M11`: Khmer dates are written in figures (day/month/year).
  const opts: Intl.DateTimeFormatOptions = {
    year: 'numeric',
    month: lang === 'km' ? '2-digit' : 'short',
    day: lang === 'km' ? '2-digit' : 'numeric',
  };
  if (withTime) Object.assign(opts, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return new Intl.DateTimeFormat('en-GB', opts).format(d);
}
