import crypto from 'node:crypto';
import type { Knex } from 'knex';

// RBAC data as the original's migrations left it: five roles with fixed roleids, 28 permission titles,
// 190 permission rows, the grants of each role, and the superadmin account bound to Super Admin;
// tokens get a session id and an expiry.
// A migration is a frozen snapshot, so it carries its own copy of the catalogue; central/test checks it
// against @lms/shared's catalogue.

export const ROLES: ReadonlyArray<readonly [roleid: string, rolename: string]> = [
  ["Mapyr2Pw", "Super Admin"],
  ["zr5ER4QD", "Admin"],
  ["Q3Qs7PuD", "Teacher"],
  ["wSRgm8KP", "User"],
  ["dErM4cvb", "API Key"],
];

/** [title, description] in display order. */
export const TITLES: ReadonlyArray<readonly [string, string]> = [
  ["Curriculum", "Curriculum"],
  ["Documenttag", "Document Tag"],
  ["Questiontag", "Question Tag"],
  ["Document", "Document"],
  ["Question", "Question"],
  ["Grade", "Grade"],
  ["Levelquizquestion", "Level Quiz Question"],
  ["Level", "Level"],
  ["Lesson", "Lesson"],
  ["Lessonlearning", "Lesson Learning"],
  ["Lessonpracticequestion", "Lesson Practice Question"],
  ["Lessonpractice", "Lesson Practice"],
  ["Lessonquizquestion", "Lesson Quiz Question"],
  ["Lessonquiz", "Lesson Quiz"],
  ["Import", "Import"],
  ["School", "School"],
  ["Sync", "Sync"],
  ["Export", "Export"],
  ["Student", "Student"],
  ["Standard", "Standard"],
  ["Subject", "Subject"],
  ["Teacher", "Teacher"],
  ["Baseline-endline", "Curriculum Baseline Endline"],
  ["Country", "Country"],
  ["User", "User"],
  ["Role", "Role"],
  ["Feedback", "Feedback"],
  ["Report", "Reports and dashboards"],
];

/** [name, title, description]. */
export const PERMISSIONS: ReadonlyArray<readonly [string, string, string]> = [
  ["list_curriculum", "Curriculum", "List Curriculum"],
  ["create_curriculum", "Curriculum", "Create Curriculum"],
  ["update_curriculum", "Curriculum", "Update Curriculum"],
  ["view_curriculum", "Curriculum", "View Curriculum"],
  ["delete_curriculum", "Curriculum", "Delete Curriculum"],
  ["list_documenttag", "Documenttag", "List Documenttag"],
  ["create_documenttag", "Documenttag", "Create Documenttag"],
  ["update_documenttag", "Documenttag", "Update Documenttag"],
  ["view_documenttag", "Documenttag", "View Documenttag"],
  ["delete_documenttag", "Documenttag", "Delete Documenttag"],
  ["list_questiontag", "Questiontag", "List Questiontag"],
  ["create_questiontag", "Questiontag", "Create Questiontag"],
  ["update_questiontag", "Questiontag", "Update Questiontag"],
  ["view_questiontag", "Questiontag", "View Questiontag"],
  ["delete_questiontag", "Questiontag", "Delete Questiontag"],
  ["list_document", "Document", "List Document"],
  ["create_document", "Document", "Create Document"],
  ["update_document", "Document", "Update Document"],
  ["view_document", "Document", "View Document"],
  ["delete_document", "Document", "Delete Document"],
  ["list_question", "Question", "List Question"],
  ["create_question", "Question", "Create Question"],
  ["update_question", "Question", "Update Question"],
  ["view_question", "Question", "View Question"],
  ["delete_question", "Question", "Delete Question"],
  ["list_grade", "Grade", "List Grade"],
  ["create_grade", "Grade", "Create Grade"],
  ["update_grade", "Grade", "Update Grade"],
  ["view_grade", "Grade", "View Grade"],
  ["delete_grade", "Grade", "Delete Grade"],
  ["list_levelquizquestion", "Levelquizquestion", "List Levelquizquestion"],
  ["create_levelquizquestion", "Levelquizquestion", "Create Levelquizquestion"],
  ["update_levelquizquestion", "Levelquizquestion", "Update Levelquizquestion"],
  ["view_levelquizquestion", "Levelquizquestion", "View Levelquizquestion"],
  ["delete_levelquizquestion", "Levelquizquestion", "Delete Levelquizquestion"],
  ["list_level", "Level", "List Level"],
  ["create_level", "Level", "Create Level"],
  ["update_level", "Level", "Update Level"],
  ["view_level", "Level", "View Level"],
  ["delete_level", "Level", "Delete Level"],
  ["list_lesson", "Lesson", "List Lesson"],
  ["create_lesson", "Lesson", "Create Lesson"],
  ["update_lesson", "Lesson", "Update Lesson"],
  ["view_lesson", "Lesson", "View Lesson"],
  ["delete_lesson", "Lesson", "Delete Lesson"],
  ["list_lessonlearning", "Lessonlearning", "List Lessonlearning"],
  ["create_lessonlearning", "Lessonlearning", "Create Lessonlearning"],
  ["update_lessonlearning", "Lessonlearning", "Update Lessonlearning"],
  ["view_lessonlearning", "Lessonlearning", "View Lessonlearning"],
  ["delete_lessonlearning", "Lessonlearning", "Delete Lessonlearning"],
  ["list_lessonpracticequestion", "Lessonpracticequestion", "List Lessonpracticequestion"],
  ["create_lessonpracticequestion", "Lessonpracticequestion", "Create Lessonpracticequestion"],
  ["update_lessonpracticequestion", "Lessonpracticequestion", "Update Lessonpracticequestion"],
  ["view_lessonpracticequestion", "Lessonpracticequestion", "View Lessonpracticequestion"],
  ["delete_lessonpracticequestion", "Lessonpracticequestion", "Delete Lessonpracticequestion"],
  ["list_lessonpractice", "Lessonpractice", "List Lessonpractice"],
  ["create_lessonpractice", "Lessonpractice", "Create Lessonpractice"],
  ["update_lessonpractice", "Lessonpractice", "Update Lessonpractice"],
  ["view_lessonpractice", "Lessonpractice", "View Lessonpractice"],
  ["delete_lessonpractice", "Lessonpractice", "Delete Lessonpractice"],
  ["list_lessonquizquestion", "Lessonquizquestion", "List Lessonquizquestion"],
  ["create_lessonquizquestion", "Lessonquizquestion", "Create Lessonquizquestion"],
  ["update_lessonquizquestion", "Lessonquizquestion", "Update Lessonquizquestion"],
  ["view_lessonquizquestion", "Lessonquizquestion", "View Lessonquizquestion"],
  ["delete_lessonquizquestion", "Lessonquizquestion", "Delete Lessonquizquestion"],
  ["list_lessonquiz", "Lessonquiz", "List Lessonquiz"],
  ["create_lessonquiz", "Lessonquiz", "Create Lessonquiz"],
  ["update_lessonquiz", "Lessonquiz", "Update Lessonquiz"],
  ["view_lessonquiz", "Lessonquiz", "View Lessonquiz"],
  ["delete_lessonquiz", "Lessonquiz", "Delete Lessonquiz"],
  ["list_import", "Import", "List Import"],
  ["create_import", "Import", "Create Import"],
  ["update_import", "Import", "Update Import"],
  ["view_import", "Import", "View Import"],
  ["delete_import", "Import", "Delete Import"],
  ["list_school", "School", "List School"],
  ["create_school", "School", "Create School"],
  ["update_school", "School", "Update School"],
  ["view_school", "School", "View School"],
  ["delete_school", "School", "Delete School"],
  ["list_sync", "Sync", "List Sync"],
  ["create_sync", "Sync", "Create Sync"],
  ["update_sync", "Sync", "Update Sync"],
  ["view_sync", "Sync", "View Sync"],
  ["delete_sync", "Sync", "Delete Sync"],
  ["list_export", "Export", "List Export"],
  ["create_export", "Export", "Create Export"],
  ["update_export", "Export", "Update Export"],
  ["view_export", "Export", "View Export"],
  ["delete_export", "Export", "Delete Export"],
  ["list_student", "Student", "List Student"],
  ["create_student", "Student", "Create Student"],
  ["update_student", "Student", "Update Student"],
  ["view_student", "Student", "View Student"],
  ["delete_student", "Student", "Delete Student"],
  ["list_standard", "Standard", "List Standard"],
  ["create_standard", "Standard", "Create Standard"],
  ["update_standard", "Standard", "Update Standard"],
  ["view_standard", "Standard", "View Standard"],
  ["delete_standard", "Standard", "Delete Standard"],
  ["list_subject", "Subject", "List Subject"],
  ["create_subject", "Subject", "Create Subject"],
  ["update_subject", "Subject", "Update Subject"],
  ["view_subject", "Subject", "View Subject"],
  ["delete_subject", "Subject", "Delete Subject"],
  ["list_teacher", "Teacher", "List Teacher"],
  ["create_teacher", "Teacher", "Create Teacher"],
  ["update_teacher", "Teacher", "Update Teacher"],
  ["view_teacher", "Teacher", "View Teacher"],
  ["delete_teacher", "Teacher", "Delete Teacher"],
  ["list_baseline-endline", "Baseline-endline", "List Baseline-endline"],
  ["create_baseline-endline", "Baseline-endline", "Create Baseline-endline"],
  ["update_baseline-endline", "Baseline-endline", "Update Baseline-endline"],
  ["view_baseline-endline", "Baseline-endline", "View Baseline-endline"],
  ["delete_baseline-endline", "Baseline-endline", "Delete Baseline-endline"],
  ["list_country", "Country", "List Country"],
  ["create_country", "Country", "Create Country"],
  ["update_country", "Country", "Update Country"],
  ["view_country", "Country", "View Country"],
  ["delete_country", "Country", "Delete Country"],
  ["list_user", "User", "List User"],
  ["create_user", "User", "Create User"],
  ["update_user", "User", "Update User"],
  ["view_user", "User", "View User"],
  ["delete_user", "User", "Delete User"],
  ["list_role", "Role", "List Role"],
  ["create_role", "Role", "Create Role"],
  ["update_role", "Role", "Update Role"],
  ["view_role", "Role", "View Role"],
  ["delete_role", "Role", "Delete Role"],
  ["list_feedback", "Feedback", "List Feedback"],
  ["create_feedback", "Feedback", "Create Feedback"],
  ["update_feedback", "Feedback", "Update Feedback"],
  ["view_feedback", "Feedback", "View Feedback"],
  ["delete_feedback", "Feedback", "Delete Feedback"],
  ["sync_content", "Sync", "Sync content"],
  ["edit_document_tag", "Documenttag", "Edit document tag"],
  ["add_document_tag", "Documenttag", "Add document tag"],
  ["add_question_tag", "Questiontag", "Add question tag"],
  ["remove_question_tags", "Questiontag", "Remove question tags"],
  ["view_level_quiz", "Report", "View level quiz"],
  ["create_level_quiz_question", "Levelquizquestion", "Create level quiz question"],
  ["delete_level_quiz_question", "Levelquizquestion", "Delete level quiz question"],
  ["deactivate_level_quiz_question", "Levelquizquestion", "Deactivate level quiz question"],
  ["reorder_level_quiz_question", "Levelquizquestion", "Reorder level quiz question"],
  ["deactivate_lessonlearning", "Lessonlearning", "Deactivate lessonlearning"],
  ["deactivate_lessonpractice", "Lessonpractice", "Deactivate lessonpractice"],
  ["edit_practice_question", "Question", "Edit practice question"],
  ["deactivate_lessonquiz", "Lessonquiz", "Deactivate lessonquiz"],
  ["edit_quiz_question", "Question", "Edit quiz question"],
  ["view_download_student", "Report", "View download student"],
  ["sync_students", "Report", "Sync students"],
  ["view_school_contribution", "Report", "View school contribution"],
  ["create_fees_collection", "Report", "Create fees collection"],
  ["update_fees_collection", "Report", "Update fees collection"],
  ["delete_fees_collection", "Report", "Delete fees collection"],
  ["view_feedback_detail", "Feedback", "View feedback detail"],
  ["view_plus_reach", "Report", "View plus reach"],
  ["view_reach_school", "Report", "View reach school"],
  ["view_impact", "Report", "View impact"],
  ["view_fees_collection", "Report", "View fees collection"],
  ["view_tech_downtime", "Report", "View tech downtime"],
  ["view_offline_report", "Report", "View offline report"],
  ["view_online_report", "Report", "View online report"],
  ["view_offline_quiz_score", "Report", "View offline quiz score"],
  ["view_download_student_quiz_score", "Report", "View download student quiz score"],
  ["view_class_quiz_score", "Report", "View class quiz score"],
  ["view_download_class_quiz_score", "Report", "View download class quiz score"],
  ["view_current_level", "Report", "View current level"],
  ["download_current_level", "Report", "Download current level"],
  ["view_active_status", "Report", "View active status"],
  ["download_active_status", "Report", "Download active status"],
  ["view_student_level_quiz", "Report", "View student level quiz"],
  ["download_student_level_quiz", "Report", "Download student level quiz"],
  ["view_class_level_quiz", "Report", "View class level quiz"],
  ["download_class_level_quiz", "Report", "Download class level quiz"],
  ["view_online_quiz_score", "Report", "View online quiz score"],
  ["view_download_online_student_quiz_score", "Report", "View download online student quiz score"],
  ["view_online_class_quiz_score", "Report", "View online class quiz score"],
  ["view_download_online_class_quiz_score", "Report", "View download online class quiz score"],
  ["view_online_current_level", "Report", "View online current level"],
  ["download_online_current_level", "Report", "Download online current level"],
  ["view_online_active_status", "Report", "View online active status"],
  ["download_online_active_status", "Report", "Download online active status"],
  ["view_online_student_level_quiz", "Report", "View online student level quiz"],
  ["download_online_student_level_quiz", "Report", "Download online student level quiz"],
  ["view_online_class_level_quiz", "Report", "View online class level quiz"],
  ["download_online_class_level_quiz", "Report", "Download online class level quiz"],
  ["view_sync_record", "Report", "View sync record"],
  ["view_map", "Report", "View map"],
];

const ALL = PERMISSIONS.map(([name]) => name);

/** Permission names per roleid; Super Admin holds every row, User and API Key hold none. */
export const GRANTS: Readonly<Record<string, readonly string[]>> = {
  Mapyr2Pw: ALL,
  zr5ER4QD: [
    "create_curriculum", "view_curriculum", "update_curriculum", "delete_curriculum", "sync_content", "create_baseline-endline",
    "view_baseline-endline", "update_baseline-endline", "delete_baseline-endline", "create_documenttag", "view_documenttag", "update_documenttag",
    "delete_documenttag", "create_questiontag", "view_questiontag", "update_questiontag", "delete_questiontag", "create_document",
    "view_document", "edit_document_tag", "add_document_tag", "delete_document", "create_question", "view_question",
    "update_question", "delete_question", "add_question_tag", "remove_question_tags", "create_grade", "view_grade",
    "update_grade", "delete_grade", "create_level", "view_level", "update_level", "delete_level",
    "view_level_quiz", "create_level_quiz_question", "delete_level_quiz_question", "deactivate_level_quiz_question", "reorder_level_quiz_question", "create_lesson",
    "view_lesson", "update_lesson", "delete_lesson", "create_levelquizquestion", "view_levelquizquestion", "update_levelquizquestion",
    "delete_levelquizquestion", "create_lessonlearning", "view_lessonlearning", "update_lessonlearning", "delete_lessonlearning", "deactivate_lessonlearning",
    "create_lessonpractice", "view_lessonpractice", "update_lessonpractice", "delete_lessonpractice", "deactivate_lessonpractice", "edit_practice_question",
    "create_lessonquiz", "view_lessonquiz", "update_lessonquiz", "delete_lessonquiz", "deactivate_lessonquiz", "edit_quiz_question",
    "list_lessonpracticequestion", "create_lessonpracticequestion", "view_lessonpracticequestion", "update_lessonpracticequestion", "delete_lessonpracticequestion", "list_lessonquizquestion",
    "create_lessonquizquestion", "view_lessonquizquestion", "update_lessonquizquestion", "delete_lessonquizquestion", "list_import", "create_import",
    "view_import", "update_import", "delete_import", "create_school", "view_school", "update_school",
    "delete_school", "view_download_student", "sync_students", "view_school_contribution", "create_fees_collection", "update_fees_collection",
    "delete_fees_collection", "list_sync", "create_sync", "view_sync", "update_sync", "delete_sync",
    "list_export", "create_export", "view_export", "update_export", "delete_export", "create_student",
    "view_student", "update_student", "delete_student", "create_standard", "view_standard", "update_standard",
    "delete_standard", "create_teacher", "view_teacher", "update_teacher", "delete_teacher", "create_country",
    "view_country", "update_country", "delete_country", "create_feedback", "view_feedback", "update_feedback",
    "delete_feedback", "view_feedback_detail", "view_plus_reach", "view_reach_school", "view_impact", "view_fees_collection",
    "view_tech_downtime", "view_offline_report", "view_online_report", "view_offline_quiz_score", "view_download_student_quiz_score", "view_class_quiz_score",
    "view_download_class_quiz_score", "view_current_level", "download_current_level", "view_active_status", "download_active_status", "view_student_level_quiz",
    "download_student_level_quiz", "view_class_level_quiz", "download_class_level_quiz", "view_online_quiz_score", "view_download_online_student_quiz_score", "view_online_class_quiz_score",
    "view_download_online_class_quiz_score", "view_online_current_level", "download_online_current_level", "view_online_active_status", "download_online_active_status", "view_online_student_level_quiz",
    "download_online_student_level_quiz", "view_online_class_level_quiz", "download_online_class_level_quiz", "view_sync_record", "view_map", "create_subject",
    "view_subject", "update_subject", "delete_subject",
  ],
  Q3Qs7PuD: [
    "view_curriculum", "view_baseline-endline", "view_documenttag", "view_questiontag", "view_document", "view_question",
    "view_grade", "view_level", "view_level_quiz", "view_lesson", "view_levelquizquestion", "view_lessonlearning",
    "view_lessonpractice", "view_lessonquiz", "view_lessonpracticequestion", "view_lessonquizquestion", "view_import", "view_school",
    "view_school_contribution", "view_sync", "view_export", "view_standard", "view_teacher", "view_country",
    "view_feedback", "view_feedback_detail", "view_plus_reach", "view_reach_school", "view_impact", "view_fees_collection",
    "view_tech_downtime", "view_offline_report", "view_online_report", "view_offline_quiz_score", "view_download_student_quiz_score", "view_class_quiz_score",
    "view_download_class_quiz_score", "view_current_level", "download_current_level", "view_active_status", "download_active_status", "view_student_level_quiz",
    "download_student_level_quiz", "view_class_level_quiz", "download_class_level_quiz", "view_online_quiz_score", "view_download_online_student_quiz_score", "view_online_class_quiz_score",
    "view_download_online_class_quiz_score", "view_online_current_level", "download_online_current_level", "view_online_active_status", "download_online_active_status", "view_online_student_level_quiz",
    "download_online_student_level_quiz", "view_online_class_level_quiz", "download_online_class_level_quiz", "view_sync_record", "view_map", "view_subject",
  ],
};

export const SUPERADMIN_USERNAME = 'superadmin@superadmin.com';
/** Not a hash any password can match: the account is unusable until an operator runs set-password. */
export const UNUSABLE_HASH = '!unusable';

export async function up(knex: Knex): Promise<void> {
  // A person may stay signed in on several devices: the pair of tokens of one sign-in shares a
  // session id, so logout and refresh revoke that session's rows and leave the others alone.
  await knex.schema.alterTable('tokens', (t) => {
    t.string('sessionid', 36).nullable().index();
    t.string('expires_at', 30).nullable();
    t.index(['lmsuserid']);
  });
  await knex.transaction(async (trx) => {
    await trx('roles').insert(ROLES.map(([roleid, rolename]) => ({ roleid, rolename })));
    const titleIds = new Map<string, string>();
    await trx('permissionstitle').insert(
      TITLES.map(([title, desc], i) => {
        const id = crypto.randomUUID();
        titleIds.set(title, id);
        return { permissiontitleid: id, permissiontitle: title, permissiondesc: desc, permissiontitleorder: i + 1, type: 1 };
      }),
    );
    const permIds = new Map<string, string>();
    const rows = PERMISSIONS.map(([name, title, desc]) => {
      const id = crypto.randomUUID();
      permIds.set(name, id);
      return { permissionid: id, permissionname: name, permissiondesc: desc, permissiontitleid: titleIds.get(title) ?? null };
    });
    await trx.batchInsert('permissions', rows, 100);
    const grants = Object.entries(GRANTS).flatMap(([roleid, names]) => names.map((n) => ({ roleid, permissionid: permIds.get(n) })));
    await trx.batchInsert('roles_permissions', grants, 100);
    const lmsuserid = crypto.randomUUID();
    await trx('lmsusers').insert({
      lmsuserid,
      lmsusername: SUPERADMIN_USERNAME,
      lmsuserpasswordhash: UNUSABLE_HASH,
      firstname: 'Super',
      lastname: 'Admin',
      lmsuserrole: 'Mapyr2Pw',
      isverified: true,
      isdisabled: false,
    });
    await trx('lmsusers_roles').insert({ lmsuserid, roleid: 'Mapyr2Pw' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx('tokens').del();
    await trx('lmsusers_roles').del();
    await trx('roles_permissions').del();
    await trx('permissions').del();
    await trx('permissionstitle').del();
    await trx('lmsusers').where({ lmsusername: SUPERADMIN_USERNAME }).del();
    await trx('roles').del();
  });
  await knex.schema.alterTable('tokens', (t) => {
    t.dropIndex(['lmsuserid']);
    t.dropIndex(['sessionid']);
    t.dropColumn('sessionid');
    t.dropColumn('expires_at');
  });
}
