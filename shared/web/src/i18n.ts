// The words of the log-sync pages, the classroom page's sync state and central's fleet page, in English and
// Khmer. `{0}`, `{1}` … are filled in by `t`.

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

  'fleet.title': 'Classroom boxes',
  'fleet.intro':
    'Register a classroom box for a school, give its one-time code to the person at the box, ' +
      'and see how each box keeps in step with central.',
  'fleet.notAllowed': 'This account cannot manage boxes. Sign in with an administrator account.',
  'fleet.heading': 'Boxes',
  'fleet.filter.school': 'School',
  'fleet.filter.state': 'State',
  'fleet.filter.all': 'All',
  'fleet.loading': 'Reading the boxes…',
  'fleet.count': 'Boxes: {0}.',
  'fleet.countSome': 'Showing {0} of {1} boxes: choose a school or a state to see the others.',
  'fleet.none': 'No boxes here yet.',
  'state.registered': 'Registered, waiting for its code',
  'state.enrolled': 'Enrolled',
  'state.revoked': 'Revoked',
  'box.school': 'School',
  'box.state': 'State',
  'box.version': 'Version',
  'box.lastContact': 'Last contact',
  'box.lastGood': 'Last good sync',
  'box.waiting': 'Rows waiting on the box',
  'box.disk': 'Free disk',
  'box.skew': 'Clock',
  'box.failures': 'Failed syncs in a row',
  'box.lastError': 'Last error',
  'box.never': 'Never',
  'box.notReported': 'Not reported',
  'box.noError': 'None',
  'box.codeWaits': 'A code waits to be used until {0}.',
  'skew.ok': 'Right (within a minute of central)',
  'skew.behind': '{0} behind central',
  'skew.ahead': '{0} ahead of central',
  'dur.min': '{0} min',
  'dur.h': '{0} h',
  'dur.d': '{0} days',
  'box.newCode': 'New code',
  'box.revoke': 'Revoke',
  'register.title': 'Register a box',
  'register.school': 'School',
  'register.name': 'Name of the box (for example: Room 4)',
  'register.button': 'Register and show its code',
  'register.busy': 'Registering…',
  'register.noSchools': 'There is no school you may register a box for.',
  'register.pickSchool': 'Choose a school.',
  'register.needName': 'Give the box a name.',
  'code.title': 'Enrolment code of {0}',
  'code.once': 'Shown only now: write it down or scan it. It works once, until {0}.',
  'code.how': 'At the box: sign in on its teacher page and enter it with the central address {0}, ' +
    'or run lms-classroom enroll --central {0} --code {1}.',
  'code.qr': 'QR code of the enrolment code',
  'code.done': 'Done: hide the code',
  'revoke.confirm': 'Revoke {0}? Its next request is refused until it is enrolled again with a new code.',
  'revoke.yes': 'Yes, revoke the box',
  'revoke.no': 'Cancel',
  'revoke.done': '{0} is revoked: central refuses its next request.',
  'newCode.done': 'A new code for {0}: the earlier one no longer works.',
  'refused.forbidden': 'This account may not do that (HTTP 403).',
  'refused.notFound': 'That box is not among the boxes of your schools.',
  'refused.invalid': 'Central refused it: {0}.',

  'sync.title': 'This box and central',
  'sync.loading': 'Reading the sync state…',
  'sync.notEnrolled':
    'This box is not enrolled at central: its activity goes up only when a teacher carries the log file.',
  'sync.enrolledAt': 'Enrolled at {0}.',
  'sync.inStep': 'Central has confirmed everything this box wrote, as of {0}.',
  'sync.behind': 'Not everything has reached central yet.',
  'sync.school': 'School',
  'sync.lastContact': 'Last contact with central',
  'sync.lastAck': 'Central last confirmed activity',
  'sync.waiting': 'Waiting to go up',
  'sync.waitingN': '{0} changes waiting to go up',
  'sync.lastDown': 'Last content from central',
  'sync.lastError': 'Last error',
  'sync.never': 'Never',
  'sync.noError': 'None',
  'sync.now': 'Sync now',
  'sync.busy': 'Syncing with central…',
  'sync.done': 'Done: central confirmed what it received.',
  'sync.failed': 'The sync did not finish: {0}',
  'sync.off': 'The sync agent is switched off on this box (FLEET_SYNC): ask the person who installed it.',
  'enrol.title': 'Enrol this box',
  'enrol.central': 'Central address (https://…)',
  'enrol.code': 'Enrolment code (from the fleet page)',
  'enrol.button': 'Enrol',
  'enrol.busy': 'Enrolling…',
  'enrol.done': 'Enrolled at central as a box of {0}.',
  'enrol.failed': 'Not enrolled: {0}',
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

  'fleet.title': 'ប្រអប់ម៉ាស៊ីនមេថ្នាក់រៀន',
  'fleet.intro': 'ចុះឈ្មោះប្រអប់ថ្នាក់រៀនសម្រាប់សាលា ផ្ដល់លេខកូដប្រើតែម្ដងដល់អ្នកនៅប្រអប់ ' +
    'ហើយមើលថាប្រអប់នីមួយៗធ្វើសមកាលកម្មជាមួយប្រព័ន្ធកណ្ដាលយ៉ាងដូចម្ដេច។',
  'fleet.notAllowed': 'គណនីនេះមិនអាចគ្រប់គ្រងប្រអប់បានទេ។ សូមចូលដោយគណនីអ្នកគ្រប់គ្រង។',
  'fleet.heading': 'ប្រអប់',
  'fleet.filter.school': 'សាលា',
  'fleet.filter.state': 'ស្ថានភាព',
  'fleet.filter.all': 'ទាំងអស់',
  'fleet.loading': 'កំពុងអានប្រអប់…',
  'fleet.count': 'ប្រអប់៖ {0}។',
  'fleet.countSome': 'កំពុងបង្ហាញ {0} ក្នុងចំណោម {1} ប្រអប់៖ សូមជ្រើសរើសសាលា ឬស្ថានភាព ដើម្បីមើលប្រអប់ផ្សេងទៀត។',
  'fleet.none': 'មិនទាន់មានប្រអប់នៅទីនេះទេ។',
  'state.registered': 'បានចុះឈ្មោះ កំពុងរង់ចាំលេខកូដ',
  'state.enrolled': 'បានភ្ជាប់',
  'state.revoked': 'បានដកសិទ្ធិ',
  'box.school': 'សាលា',
  'box.state': 'ស្ថានភាព',
  'box.version': 'កំណែ',
  'box.lastContact': 'ទំនាក់ទំនងចុងក្រោយ',
  'box.lastGood': 'សមកាលកម្មល្អចុងក្រោយ',
  'box.waiting': 'ជួរដែលកំពុងរង់ចាំនៅលើប្រអប់',
  'box.disk': 'ទំហំថាសទំនេរ',
  'box.skew': 'នាឡិកា',
  'box.failures': 'សមកាលកម្មបរាជ័យជាប់ៗគ្នា',
  'box.lastError': 'កំហុសចុងក្រោយ',
  'box.never': 'មិនដែល',
  'box.notReported': 'មិនទាន់រាយការណ៍',
  'box.noError': 'គ្មាន',
  'box.codeWaits': 'មានលេខកូដមួយកំពុងរង់ចាំប្រើ រហូតដល់ {0}។',
  'skew.ok': 'ត្រឹមត្រូវ (ខុសពីប្រព័ន្ធកណ្ដាលតិចជាងមួយនាទី)',
  'skew.behind': 'យឺតជាងប្រព័ន្ធកណ្ដាល {0}',
  'skew.ahead': 'លឿនជាងប្រព័ន្ធកណ្ដាល {0}',
  'dur.min': '{0} នាទី',
  'dur.h': '{0} ម៉ោង',
  'dur.d': '{0} ថ្ងៃ',
  'box.newCode': 'លេខកូដថ្មី',
  'box.revoke': 'ដកសិទ្ធិ',
  'register.title': 'ចុះឈ្មោះប្រអប់',
  'register.school': 'សាលា',
  'register.name': 'ឈ្មោះប្រអប់ (ឧទាហរណ៍៖ បន្ទប់ ៤)',
  'register.button': 'ចុះឈ្មោះ ហើយបង្ហាញលេខកូដ',
  'register.busy': 'កំពុងចុះឈ្មោះ…',
  'register.noSchools': 'គ្មានសាលាដែលអ្នកអាចចុះឈ្មោះប្រអប់បានទេ។',
  'register.pickSchool': 'សូមជ្រើសរើសសាលា។',
  'register.needName': 'សូមដាក់ឈ្មោះឱ្យប្រអប់។',
  'code.title': 'លេខកូដភ្ជាប់របស់ {0}',
  'code.once': 'បង្ហាញតែពេលនេះប៉ុណ្ណោះ៖ សូមសរសេរទុក ឬស្កេនវា។ វាប្រើបានតែម្ដង រហូតដល់ {0}។',
  'code.how': 'នៅប្រអប់៖ ចូលទំព័រគ្រូរបស់វា ហើយបញ្ចូលលេខកូដនេះជាមួយអាសយដ្ឋានប្រព័ន្ធកណ្ដាល {0} ' +
    'ឬដំណើរការ lms-classroom enroll --central {0} --code {1}។',
  'code.qr': 'កូដ QR នៃលេខកូដភ្ជាប់',
  'code.done': 'រួចរាល់៖ លាក់លេខកូដ',
  'revoke.confirm': 'ដកសិទ្ធិ {0}? សំណើបន្ទាប់របស់វានឹងត្រូវបដិសេធ រហូតដល់វាត្រូវបានភ្ជាប់ម្ដងទៀតដោយលេខកូដថ្មី។',
  'revoke.yes': 'បាទ/ចាស ដកសិទ្ធិប្រអប់',
  'revoke.no': 'បោះបង់',
  'revoke.done': '{0} ត្រូវបានដកសិទ្ធិ៖ ប្រព័ន្ធកណ្ដាលនឹងបដិសេធសំណើបន្ទាប់របស់វា។',
  'newCode.done': 'លេខកូដថ្មីសម្រាប់ {0}៖ លេខកូដមុនលែងប្រើបានហើយ។',
  'refused.forbidden': 'គណនីនេះមិនអាចធ្វើដូច្នេះបានទេ (HTTP 403)។',
  'refused.notFound': 'ប្រអប់នោះមិនមែនជាប្រអប់របស់សាលារបស់អ្នកទេ។',
  'refused.invalid': 'ប្រព័ន្ធកណ្ដាលបានបដិសេធ៖ {0}។',

  'sync.title': 'ប្រអប់នេះ និងប្រព័ន្ធកណ្ដាល',
  'sync.loading': 'កំពុងអានស្ថានភាពសមកាលកម្ម…',
  'sync.notEnrolled': 'ប្រអប់នេះមិនទាន់ភ្ជាប់ទៅប្រព័ន្ធកណ្ដាលទេ៖ ' +
    'សកម្មភាពរបស់វាទៅដល់ប្រព័ន្ធកណ្ដាល តែនៅពេលគ្រូយកឯកសារកំណត់ត្រាទៅប៉ុណ្ណោះ។',
  'sync.enrolledAt': 'បានភ្ជាប់ទៅ {0}។',
  'sync.inStep': 'ប្រព័ន្ធកណ្ដាលបានបញ្ជាក់ថាបានទទួលអ្វីៗទាំងអស់ដែលប្រអប់នេះបានសរសេរ គិតត្រឹម {0}។',
  'sync.behind': 'មិនទាន់មានអ្វីៗទាំងអស់ទៅដល់ប្រព័ន្ធកណ្ដាលនៅឡើយទេ។',
  'sync.school': 'សាលា',
  'sync.lastContact': 'ទំនាក់ទំនងចុងក្រោយជាមួយប្រព័ន្ធកណ្ដាល',
  'sync.lastAck': 'ប្រព័ន្ធកណ្ដាលបានបញ្ជាក់សកម្មភាពចុងក្រោយ',
  'sync.waiting': 'កំពុងរង់ចាំផ្ញើឡើង',
  'sync.waitingN': 'ការផ្លាស់ប្ដូរ {0} កំពុងរង់ចាំផ្ញើឡើង',
  'sync.lastDown': 'មាតិកាចុងក្រោយពីប្រព័ន្ធកណ្ដាល',
  'sync.lastError': 'កំហុសចុងក្រោយ',
  'sync.never': 'មិនដែល',
  'sync.noError': 'គ្មាន',
  'sync.now': 'ធ្វើសមកាលកម្មឥឡូវនេះ',
  'sync.busy': 'កំពុងធ្វើសមកាលកម្មជាមួយប្រព័ន្ធកណ្ដាល…',
  'sync.done': 'រួចរាល់៖ ប្រព័ន្ធកណ្ដាលបានបញ្ជាក់អ្វីដែលវាបានទទួល។',
  'sync.failed': 'សមកាលកម្មមិនបានបញ្ចប់ទេ៖ {0}',
  'sync.off': 'ភ្នាក់ងារសមកាលកម្មត្រូវបានបិទនៅលើប្រអប់នេះ (FLEET_SYNC)៖ សូមសួរអ្នកដែលបានដំឡើងវា។',
  'enrol.title': 'ភ្ជាប់ប្រអប់នេះ',
  'enrol.central': 'អាសយដ្ឋានប្រព័ន្ធកណ្ដាល (https://…)',
  'enrol.code': 'លេខកូដភ្ជាប់ (ពីទំព័រប្រអប់)',
  'enrol.button': 'ភ្ជាប់',
  'enrol.busy': 'កំពុងភ្ជាប់…',
  'enrol.done': 'បានភ្ជាប់ទៅប្រព័ន្ធកណ្ដាល ជាប្រអប់របស់ {0}។',
  'enrol.failed': 'មិនបានភ្ជាប់ទេ៖ {0}',
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
