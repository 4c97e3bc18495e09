// The permission catalogue of the central API as data, taken from the contract's permissions.json
// (roles with their fixed roleids, permission titles, the 190 permission rows, the grants per role).
// Edit the data, not the code that reads it; shared/test/permissions.test.ts holds the counts.

export interface RoleRow { roleid: string; key: string; name: string }
export interface TitleRow { title: string; desc: string; origin: string }
export interface PermissionRow { name: string; title: string; desc: string; inEnum: boolean; origin: string }

export const ROLE_ROWS: readonly RoleRow[] = [
  {
    roleid: "Mapyr2Pw",
    key: "superadmin",
    name: "Super Admin"
  },
  {
    roleid: "zr5ER4QD",
    key: "admin",
    name: "Admin"
  },
  {
    roleid: "Q3Qs7PuD",
    key: "teacher",
    name: "Teacher"
  },
  {
    roleid: "wSRgm8KP",
    key: "user",
    name: "User"
  },
  {
    roleid: "dErM4cvb",
    key: "apikey",
    name: "API Key"
  }
];

export const TITLE_ROWS: readonly TitleRow[] = [
  {
    title: "Curriculum",
    desc: "Curriculum",
    origin: "grid"
  },
  {
    title: "Documenttag",
    desc: "Document Tag",
    origin: "grid"
  },
  {
    title: "Questiontag",
    desc: "Question Tag",
    origin: "grid"
  },
  {
    title: "Document",
    desc: "Document",
    origin: "grid"
  },
  {
    title: "Question",
    desc: "Question",
    origin: "grid"
  },
  {
    title: "Grade",
    desc: "Grade",
    origin: "grid"
  },
  {
    title: "Levelquizquestion",
    desc: "Level Quiz Question",
    origin: "grid"
  },
  {
    title: "Level",
    desc: "Level",
    origin: "grid"
  },
  {
    title: "Lesson",
    desc: "Lesson",
    origin: "grid"
  },
  {
    title: "Lessonlearning",
    desc: "Lesson Learning",
    origin: "grid"
  },
  {
    title: "Lessonpracticequestion",
    desc: "Lesson Practice Question",
    origin: "grid"
  },
  {
    title: "Lessonpractice",
    desc: "Lesson Practice",
    origin: "grid"
  },
  {
    title: "Lessonquizquestion",
    desc: "Lesson Quiz Question",
    origin: "grid"
  },
  {
    title: "Lessonquiz",
    desc: "Lesson Quiz",
    origin: "grid"
  },
  {
    title: "Import",
    desc: "Import",
    origin: "grid"
  },
  {
    title: "School",
    desc: "School",
    origin: "grid"
  },
  {
    title: "Sync",
    desc: "Sync",
    origin: "grid"
  },
  {
    title: "Export",
    desc: "Export",
    origin: "grid"
  },
  {
    title: "Student",
    desc: "Student",
    origin: "grid"
  },
  {
    title: "Standard",
    desc: "Standard",
    origin: "grid"
  },
  {
    title: "Subject",
    desc: "Subject",
    origin: "grid"
  },
  {
    title: "Teacher",
    desc: "Teacher",
    origin: "grid"
  },
  {
    title: "Baseline-endline",
    desc: "Curriculum Baseline Endline",
    origin: "grid"
  },
  {
    title: "Country",
    desc: "Country",
    origin: "grid"
  },
  {
    title: "User",
    desc: "User",
    origin: "grid"
  },
  {
    title: "Role",
    desc: "Role",
    origin: "grid"
  },
  {
    title: "Feedback",
    desc: "Feedback",
    origin: "grid"
  },
  {
    title: "Report",
    desc: "Reports and dashboards",
    origin: "migration"
  }
];

export const PERMISSION_ROWS: readonly PermissionRow[] = [
  {name: "list_curriculum", title: "Curriculum", desc: "List Curriculum", inEnum: false, origin: "grid"},
  {name: "create_curriculum", title: "Curriculum", desc: "Create Curriculum", inEnum: true, origin: "grid"},
  {name: "update_curriculum", title: "Curriculum", desc: "Update Curriculum", inEnum: true, origin: "grid"},
  {name: "view_curriculum", title: "Curriculum", desc: "View Curriculum", inEnum: true, origin: "grid"},
  {name: "delete_curriculum", title: "Curriculum", desc: "Delete Curriculum", inEnum: true, origin: "grid"},
  {name: "list_documenttag", title: "Documenttag", desc: "List Documenttag", inEnum: false, origin: "grid"},
  {name: "create_documenttag", title: "Documenttag", desc: "Create Documenttag", inEnum: true, origin: "grid"},
  {name: "update_documenttag", title: "Documenttag", desc: "Update Documenttag", inEnum: true, origin: "grid"},
  {name: "view_documenttag", title: "Documenttag", desc: "View Documenttag", inEnum: true, origin: "grid"},
  {name: "delete_documenttag", title: "Documenttag", desc: "Delete Documenttag", inEnum: true, origin: "grid"},
  {name: "list_questiontag", title: "Questiontag", desc: "List Questiontag", inEnum: false, origin: "grid"},
  {name: "create_questiontag", title: "Questiontag", desc: "Create Questiontag", inEnum: true, origin: "grid"},
  {name: "update_questiontag", title: "Questiontag", desc: "Update Questiontag", inEnum: true, origin: "grid"},
  {name: "view_questiontag", title: "Questiontag", desc: "View Questiontag", inEnum: true, origin: "grid"},
  {name: "delete_questiontag", title: "Questiontag", desc: "Delete Questiontag", inEnum: true, origin: "grid"},
  {name: "list_document", title: "Document", desc: "List Document", inEnum: false, origin: "grid"},
  {name: "create_document", title: "Document", desc: "Create Document", inEnum: true, origin: "grid"},
  {name: "update_document", title: "Document", desc: "Update Document", inEnum: false, origin: "grid"},
  {name: "view_document", title: "Document", desc: "View Document", inEnum: true, origin: "grid"},
  {name: "delete_document", title: "Document", desc: "Delete Document", inEnum: true, origin: "grid"},
  {name: "list_question", title: "Question", desc: "List Question", inEnum: false, origin: "grid"},
  {name: "create_question", title: "Question", desc: "Create Question", inEnum: true, origin: "grid"},
  {name: "update_question", title: "Question", desc: "Update Question", inEnum: true, origin: "grid"},
  {name: "view_question", title: "Question", desc: "View Question", inEnum: true, origin: "grid"},
  {name: "delete_question", title: "Question", desc: "Delete Question", inEnum: true, origin: "grid"},
  {name: "list_grade", title: "Grade", desc: "List Grade", inEnum: false, origin: "grid"},
  {name: "create_grade", title: "Grade", desc: "Create Grade", inEnum: true, origin: "grid"},
  {name: "update_grade", title: "Grade", desc: "Update Grade", inEnum: true, origin: "grid"},
  {name: "view_grade", title: "Grade", desc: "View Grade", inEnum: true, origin: "grid"},
  {name: "delete_grade", title: "Grade", desc: "Delete Grade", inEnum: true, origin: "grid"},
  {name: "list_levelquizquestion", title: "Levelquizquestion", desc: "List Levelquizquestion", inEnum: false, origin: "grid"},
  {name: "create_levelquizquestion", title: "Levelquizquestion", desc: "Create Levelquizquestion", inEnum: true, origin: "grid"},
  {name: "update_levelquizquestion", title: "Levelquizquestion", desc: "Update Levelquizquestion", inEnum: true, origin: "grid"},
  {name: "view_levelquizquestion", title: "Levelquizquestion", desc: "View Levelquizquestion", inEnum: true, origin: "grid"},
  {name: "delete_levelquizquestion", title: "Levelquizquestion", desc: "Delete Levelquizquestion", inEnum: true, origin: "grid"},
  {name: "list_level", title: "Level", desc: "List Level", inEnum: false, origin: "grid"},
  {name: "create_level", title: "Level", desc: "Create Level", inEnum: true, origin: "grid"},
  {name: "update_level", title: "Level", desc: "Update Level", inEnum: true, origin: "grid"},
  {name: "view_level", title: "Level", desc: "View Level", inEnum: true, origin: "grid"},
  {name: "delete_level", title: "Level", desc: "Delete Level", inEnum: true, origin: "grid"},
  {name: "list_lesson", title: "Lesson", desc: "List Lesson", inEnum: false, origin: "grid"},
  {name: "create_lesson", title: "Lesson", desc: "Create Lesson", inEnum: true, origin: "grid"},
  {name: "update_lesson", title: "Lesson", desc: "Update Lesson", inEnum: true, origin: "grid"},
  {name: "view_lesson", title: "Lesson", desc: "View Lesson", inEnum: true, origin: "grid"},
  {name: "delete_lesson", title: "Lesson", desc: "Delete Lesson", inEnum: true, origin: "grid"},
  {name: "list_lessonlearning", title: "Lessonlearning", desc: "List Lessonlearning", inEnum: false, origin: "grid"},
  {name: "create_lessonlearning", title: "Lessonlearning", desc: "Create Lessonlearning", inEnum: true, origin: "grid"},
  {name: "update_lessonlearning", title: "Lessonlearning", desc: "Update Lessonlearning", inEnum: true, origin: "grid"},
  {name: "view_lessonlearning", title: "Lessonlearning", desc: "View Lessonlearning", inEnum: true, origin: "grid"},
  {name: "delete_lessonlearning", title: "Lessonlearning", desc: "Delete Lessonlearning", inEnum: true, origin: "grid"},
  {name: "list_lessonpracticequestion", title: "Lessonpracticequestion", desc: "List Lessonpracticequestion", inEnum: true, origin: "grid"},
  {name: "create_lessonpracticequestion", title: "Lessonpracticequestion", desc: "Create Lessonpracticequestion", inEnum: true, origin: "grid"},
  {name: "update_lessonpracticequestion", title: "Lessonpracticequestion", desc: "Update Lessonpracticequestion", inEnum: true, origin: "grid"},
  {name: "view_lessonpracticequestion", title: "Lessonpracticequestion", desc: "View Lessonpracticequestion", inEnum: true, origin: "grid"},
  {name: "delete_lessonpracticequestion", title: "Lessonpracticequestion", desc: "Delete Lessonpracticequestion", inEnum: true, origin: "grid"},
  {name: "list_lessonpractice", title: "Lessonpractice", desc: "List Lessonpractice", inEnum: false, origin: "grid"},
  {name: "create_lessonpractice", title: "Lessonpractice", desc: "Create Lessonpractice", inEnum: true, origin: "grid"},
  {name: "update_lessonpractice", title: "Lessonpractice", desc: "Update Lessonpractice", inEnum: true, origin: "grid"},
  {name: "view_lessonpractice", title: "Lessonpractice", desc: "View Lessonpractice", inEnum: true, origin: "grid"},
  {name: "delete_lessonpractice", title: "Lessonpractice", desc: "Delete Lessonpractice", inEnum: true, origin: "grid"},
  {name: "list_lessonquizquestion", title: "Lessonquizquestion", desc: "List Lessonquizquestion", inEnum: true, origin: "grid"},
  {name: "create_lessonquizquestion", title: "Lessonquizquestion", desc: "Create Lessonquizquestion", inEnum: true, origin: "grid"},
  {name: "update_lessonquizquestion", title: "Lessonquizquestion", desc: "Update Lessonquizquestion", inEnum: true, origin: "grid"},
  {name: "view_lessonquizquestion", title: "Lessonquizquestion", desc: "View Lessonquizquestion", inEnum: true, origin: "grid"},
  {name: "delete_lessonquizquestion", title: "Lessonquizquestion", desc: "Delete Lessonquizquestion", inEnum: true, origin: "grid"},
  {name: "list_lessonquiz", title: "Lessonquiz", desc: "List Lessonquiz", inEnum: false, origin: "grid"},
  {name: "create_lessonquiz", title: "Lessonquiz", desc: "Create Lessonquiz", inEnum: true, origin: "grid"},
  {name: "update_lessonquiz", title: "Lessonquiz", desc: "Update Lessonquiz", inEnum: true, origin: "grid"},
  {name: "view_lessonquiz", title: "Lessonquiz", desc: "View Lessonquiz", inEnum: true, origin: "grid"},
  {name: "delete_lessonquiz", title: "Lessonquiz", desc: "Delete Lessonquiz", inEnum: true, origin: "grid"},
  {name: "list_import", title: "Import", desc: "List Import", inEnum: true, origin: "grid"},
  {name: "create_import", title: "Import", desc: "Create Import", inEnum: true, origin: "grid"},
  {name: "update_import", title: "Import", desc: "Update Import", inEnum: true, origin: "grid"},
  {name: "view_import", title: "Import", desc: "View Import", inEnum: true, origin: "grid"},
  {name: "delete_import", title: "Import", desc: "Delete Import", inEnum: true, origin: "grid"},
  {name: "list_school", title: "School", desc: "List School", inEnum: false, origin: "grid"},
  {name: "create_school", title: "School", desc: "Create School", inEnum: true, origin: "grid"},
  {name: "update_school", title: "School", desc: "Update School", inEnum: true, origin: "grid"},
  {name: "view_school", title: "School", desc: "View School", inEnum: true, origin: "grid"},
  {name: "delete_school", title: "School", desc: "Delete School", inEnum: true, origin: "grid"},
  {name: "list_sync", title: "Sync", desc: "List Sync", inEnum: true, origin: "grid"},
  {name: "create_sync", title: "Sync", desc: "Create Sync", inEnum: true, origin: "grid"},
  {name: "update_sync", title: "Sync", desc: "Update Sync", inEnum: true, origin: "grid"},
  {name: "view_sync", title: "Sync", desc: "View Sync", inEnum: true, origin: "grid"},
  {name: "delete_sync", title: "Sync", desc: "Delete Sync", inEnum: true, origin: "grid"},
  {name: "list_export", title: "Export", desc: "List Export", inEnum: true, origin: "grid"},
  {name: "create_export", title: "Export", desc: "Create Export", inEnum: true, origin: "grid"},
  {name: "update_export", title: "Export", desc: "Update Export", inEnum: true, origin: "grid"},
  {name: "view_export", title: "Export", desc: "View Export", inEnum: true, origin: "grid"},
  {name: "delete_export", title: "Export", desc: "Delete Export", inEnum: true, origin: "grid"},
  {name: "list_student", title: "Student", desc: "List Student", inEnum: false, origin: "grid"},
  {name: "create_student", title: "Student", desc: "Create Student", inEnum: true, origin: "grid"},
  {name: "update_student", title: "Student", desc: "Update Student", inEnum: true, origin: "grid"},
  {name: "view_student", title: "Student", desc: "View Student", inEnum: true, origin: "grid"},
  {name: "delete_student", title: "Student", desc: "Delete Student", inEnum: true, origin: "grid"},
  {name: "list_standard", title: "Standard", desc: "List Standard", inEnum: false, origin: "grid"},
  {name: "create_standard", title: "Standard", desc: "Create Standard", inEnum: true, origin: "grid"},
  {name: "update_standard", title: "Standard", desc: "Update Standard", inEnum: true, origin: "grid"},
  {name: "view_standard", title: "Standard", desc: "View Standard", inEnum: true, origin: "grid"},
  {name: "delete_standard", title: "Standard", desc: "Delete Standard", inEnum: true, origin: "grid"},
  {name: "list_subject", title: "Subject", desc: "List Subject", inEnum: false, origin: "grid"},
  {name: "create_subject", title: "Subject", desc: "Create Subject", inEnum: true, origin: "grid"},
  {name: "update_subject", title: "Subject", desc: "Update Subject", inEnum: true, origin: "grid"},
  {name: "view_subject", title: "Subject", desc: "View Subject", inEnum: true, origin: "grid"},
  {name: "delete_subject", title: "Subject", desc: "Delete Subject", inEnum: true, origin: "grid"},
  {name: "list_teacher", title: "Teacher", desc: "List Teacher", inEnum: false, origin: "grid"},
  {name: "create_teacher", title: "Teacher", desc: "Create Teacher", inEnum: true, origin: "grid"},
  {name: "update_teacher", title: "Teacher", desc: "Update Teacher", inEnum: true, origin: "grid"},
  {name: "view_teacher", title: "Teacher", desc: "View Teacher", inEnum: true, origin: "grid"},
  {name: "delete_teacher", title: "Teacher", desc: "Delete Teacher", inEnum: true, origin: "grid"},
  {name: "list_baseline-endline", title: "Baseline-endline", desc: "List Baseline-endline", inEnum: false, origin: "grid"},
  {name: "create_baseline-endline", title: "Baseline-endline", desc: "Create Baseline-endline", inEnum: true, origin: "grid"},
  {name: "update_baseline-endline", title: "Baseline-endline", desc: "Update Baseline-endline", inEnum: true, origin: "grid"},
  {name: "view_baseline-endline", title: "Baseline-endline", desc: "View Baseline-endline", inEnum: true, origin: "grid"},
  {name: "delete_baseline-endline", title: "Baseline-endline", desc: "Delete Baseline-endline", inEnum: true, origin: "grid"},
  {name: "list_country", title: "Country", desc: "List Country", inEnum: false, origin: "grid"},
  {name: "create_country", title: "Country", desc: "Create Country", inEnum: true, origin: "grid"},
  {name: "update_country", title: "Country", desc: "Update Country", inEnum: true, origin: "grid"},
  {name: "view_country", title: "Country", desc: "View Country", inEnum: true, origin: "grid"},
  {name: "delete_country", title: "Country", desc: "Delete Country", inEnum: true, origin: "grid"},
  {name: "list_user", title: "User", desc: "List User", inEnum: false, origin: "grid"},
  {name: "create_user", title: "User", desc: "Create User", inEnum: true, origin: "grid"},
  {name: "update_user", title: "User", desc: "Update User", inEnum: true, origin: "grid"},
  {name: "view_user", title: "User", desc: "View User", inEnum: true, origin: "grid"},
  {name: "delete_user", title: "User", desc: "Delete User", inEnum: true, origin: "grid"},
  {name: "list_role", title: "Role", desc: "List Role", inEnum: false, origin: "grid"},
  {name: "create_role", title: "Role", desc: "Create Role", inEnum: true, origin: "grid"},
  {name: "update_role", title: "Role", desc: "Update Role", inEnum: true, origin: "grid"},
  {name: "view_role", title: "Role", desc: "View Role", inEnum: true, origin: "grid"},
  {name: "delete_role", title: "Role", desc: "Delete Role", inEnum: true, origin: "grid"},
  {name: "list_feedback", title: "Feedback", desc: "List Feedback", inEnum: false, origin: "grid"},
  {name: "create_feedback", title: "Feedback", desc: "Create Feedback", inEnum: true, origin: "grid"},
  {name: "update_feedback", title: "Feedback", desc: "Update Feedback", inEnum: true, origin: "grid"},
  {name: "view_feedback", title: "Feedback", desc: "View Feedback", inEnum: true, origin: "grid"},
  {name: "delete_feedback", title: "Feedback", desc: "Delete Feedback", inEnum: true, origin: "grid"},
  {name: "sync_content", title: "Sync", desc: "Sync content", inEnum: true, origin: "migration"},
  {name: "edit_document_tag", title: "Documenttag", desc: "Edit document tag", inEnum: true, origin: "migration"},
  {name: "add_document_tag", title: "Documenttag", desc: "Add document tag", inEnum: true, origin: "migration"},
  {name: "add_question_tag", title: "Questiontag", desc: "Add question tag", inEnum: true, origin: "migration"},
  {name: "remove_question_tags", title: "Questiontag", desc: "Remove question tags", inEnum: true, origin: "migration"},
  {name: "view_level_quiz", title: "Report", desc: "View level quiz", inEnum: true, origin: "migration"},
  {name: "create_level_quiz_question", title: "Levelquizquestion", desc: "Create level quiz question", inEnum: true, origin: "migration"},
  {name: "delete_level_quiz_question", title: "Levelquizquestion", desc: "Delete level quiz question", inEnum: true, origin: "migration"},
  {name: "deactivate_level_quiz_question", title: "Levelquizquestion", desc: "Deactivate level quiz question", inEnum: true, origin: "migration"},
  {name: "reorder_level_quiz_question", title: "Levelquizquestion", desc: "Reorder level quiz question", inEnum: true, origin: "migration"},
  {name: "deactivate_lessonlearning", title: "Lessonlearning", desc: "Deactivate lessonlearning", inEnum: true, origin: "migration"},
  {name: "deactivate_lessonpractice", title: "Lessonpractice", desc: "Deactivate lessonpractice", inEnum: true, origin: "migration"},
  {name: "edit_practice_question", title: "Question", desc: "Edit practice question", inEnum: true, origin: "migration"},
  {name: "deactivate_lessonquiz", title: "Lessonquiz", desc: "Deactivate lessonquiz", inEnum: true, origin: "migration"},
  {name: "edit_quiz_question", title: "Question", desc: "Edit quiz question", inEnum: true, origin: "migration"},
  {name: "view_download_student", title: "Report", desc: "View download student", inEnum: true, origin: "migration"},
  {name: "sync_students", title: "Report", desc: "Sync students", inEnum: true, origin: "migration"},
  {name: "view_school_contribution", title: "Report", desc: "View school contribution", inEnum: true, origin: "migration"},
  {name: "create_fees_collection", title: "Report", desc: "Create fees collection", inEnum: true, origin: "migration"},
  {name: "update_fees_collection", title: "Report", desc: "Update fees collection", inEnum: true, origin: "migration"},
  {name: "delete_fees_collection", title: "Report", desc: "Delete fees collection", inEnum: true, origin: "migration"},
  {name: "view_feedback_detail", title: "Feedback", desc: "View feedback detail", inEnum: true, origin: "migration"},
  {name: "view_plus_reach", title: "Report", desc: "View plus reach", inEnum: true, origin: "migration"},
  {name: "view_reach_school", title: "Report", desc: "View reach school", inEnum: true, origin: "migration"},
  {name: "view_impact", title: "Report", desc: "View impact", inEnum: true, origin: "migration"},
  {name: "view_fees_collection", title: "Report", desc: "View fees collection", inEnum: true, origin: "migration"},
  {name: "view_tech_downtime", title: "Report", desc: "View tech downtime", inEnum: true, origin: "migration"},
  {name: "view_offline_report", title: "Report", desc: "View offline report", inEnum: true, origin: "migration"},
  {name: "view_online_report", title: "Report", desc: "View online report", inEnum: true, origin: "migration"},
  {name: "view_offline_quiz_score", title: "Report", desc: "View offline quiz score", inEnum: true, origin: "migration"},
  {name: "view_download_student_quiz_score", title: "Report", desc: "View download student quiz score", inEnum: true, origin: "migration"},
  {name: "view_class_quiz_score", title: "Report", desc: "View class quiz score", inEnum: true, origin: "migration"},
  {name: "view_download_class_quiz_score", title: "Report", desc: "View download class quiz score", inEnum: true, origin: "migration"},
  {name: "view_current_level", title: "Report", desc: "View current level", inEnum: true, origin: "migration"},
  {name: "download_current_level", title: "Report", desc: "Download current level", inEnum: true, origin: "migration"},
  {name: "view_active_status", title: "Report", desc: "View active status", inEnum: true, origin: "migration"},
  {name: "download_active_status", title: "Report", desc: "Download active status", inEnum: true, origin: "migration"},
  {name: "view_student_level_quiz", title: "Report", desc: "View student level quiz", inEnum: true, origin: "migration"},
  {name: "download_student_level_quiz", title: "Report", desc: "Download student level quiz", inEnum: true, origin: "migration"},
  {name: "view_class_level_quiz", title: "Report", desc: "View class level quiz", inEnum: true, origin: "migration"},
  {name: "download_class_level_quiz", title: "Report", desc: "Download class level quiz", inEnum: true, origin: "migration"},
  {name: "view_online_quiz_score", title: "Report", desc: "View online quiz score", inEnum: true, origin: "migration"},
  {name: "view_download_online_student_quiz_score", title: "Report", desc: "View download online student quiz score", inEnum: true, origin: "migration"},
  {name: "view_online_class_quiz_score", title: "Report", desc: "View online class quiz score", inEnum: true, origin: "migration"},
  {name: "view_download_online_class_quiz_score", title: "Report", desc: "View download online class quiz score", inEnum: true, origin: "migration"},
  {name: "view_online_current_level", title: "Report", desc: "View online current level", inEnum: true, origin: "migration"},
  {name: "download_online_current_level", title: "Report", desc: "Download online current level", inEnum: true, origin: "migration"},
  {name: "view_online_active_status", title: "Report", desc: "View online active status", inEnum: true, origin: "migration"},
  {name: "download_online_active_status", title: "Report", desc: "Download online active status", inEnum: true, origin: "migration"},
  {name: "view_online_student_level_quiz", title: "Report", desc: "View online student level quiz", inEnum: true, origin: "migration"},
  {name: "download_online_student_level_quiz", title: "Report", desc: "Download online student level quiz", inEnum: true, origin: "migration"},
  {name: "view_online_class_level_quiz", title: "Report", desc: "View online class level quiz", inEnum: true, origin: "migration"},
  {name: "download_online_class_level_quiz", title: "Report", desc: "Download online class level quiz", inEnum: true, origin: "migration"},
  {name: "view_sync_record", title: "Report", desc: "View sync record", inEnum: true, origin: "migration"},
  {name: "view_map", title: "Report", desc: "View map", inEnum: true, origin: "migration"},
];

/** The eight user and role administration permissions Admin never gets (holding them lets one make a Super Admin). */
export const ADMIN_EXCLUDED: readonly string[] = ["create_user", "view_user", "update_user", "delete_user", "create_role", "view_role", "update_role", "delete_role"];

/** Learner identity: kept from Teacher by exact name (view_student_level_quiz etc. stay granted). */
export const TEACHER_EXCLUDED_LEARNER_IDENTITY: readonly string[] = ["view_student", "view_download_student"];

/** Permission names granted to each seeded role, by role name. */
export const GRANT_ROWS: Readonly<Record<string, readonly string[]>> = {
  "Super Admin": [
    "list_curriculum", "create_curriculum", "update_curriculum", "view_curriculum", "delete_curriculum", "list_documenttag",
    "create_documenttag", "update_documenttag", "view_documenttag", "delete_documenttag", "list_questiontag", "create_questiontag",
    "update_questiontag", "view_questiontag", "delete_questiontag", "list_document", "create_document", "update_document",
    "view_document", "delete_document", "list_question", "create_question", "update_question", "view_question",
    "delete_question", "list_grade", "create_grade", "update_grade", "view_grade", "delete_grade",
    "list_levelquizquestion", "create_levelquizquestion", "update_levelquizquestion", "view_levelquizquestion", "delete_levelquizquestion", "list_level",
    "create_level", "update_level", "view_level", "delete_level", "list_lesson", "create_lesson",
    "update_lesson", "view_lesson", "delete_lesson", "list_lessonlearning", "create_lessonlearning", "update_lessonlearning",
    "view_lessonlearning", "delete_lessonlearning", "list_lessonpracticequestion", "create_lessonpracticequestion", "update_lessonpracticequestion", "view_lessonpracticequestion",
    "delete_lessonpracticequestion", "list_lessonpractice", "create_lessonpractice", "update_lessonpractice", "view_lessonpractice", "delete_lessonpractice",
    "list_lessonquizquestion", "create_lessonquizquestion", "update_lessonquizquestion", "view_lessonquizquestion", "delete_lessonquizquestion", "list_lessonquiz",
    "create_lessonquiz", "update_lessonquiz", "view_lessonquiz", "delete_lessonquiz", "list_import", "create_import",
    "update_import", "view_import", "delete_import", "list_school", "create_school", "update_school",
    "view_school", "delete_school", "list_sync", "create_sync", "update_sync", "view_sync",
    "delete_sync", "list_export", "create_export", "update_export", "view_export", "delete_export",
    "list_student", "create_student", "update_student", "view_student", "delete_student", "list_standard",
    "create_standard", "update_standard", "view_standard", "delete_standard", "list_subject", "create_subject",
    "update_subject", "view_subject", "delete_subject", "list_teacher", "create_teacher", "update_teacher",
    "view_teacher", "delete_teacher", "list_baseline-endline", "create_baseline-endline", "update_baseline-endline", "view_baseline-endline",
    "delete_baseline-endline", "list_country", "create_country", "update_country", "view_country", "delete_country",
    "list_user", "create_user", "update_user", "view_user", "delete_user", "list_role",
    "create_role", "update_role", "view_role", "delete_role", "list_feedback", "create_feedback",
    "update_feedback", "view_feedback", "delete_feedback", "sync_content", "edit_document_tag", "add_document_tag",
    "add_question_tag", "remove_question_tags", "view_level_quiz", "create_level_quiz_question", "delete_level_quiz_question", "deactivate_level_quiz_question",
    "reorder_level_quiz_question", "deactivate_lessonlearning", "deactivate_lessonpractice", "edit_practice_question", "deactivate_lessonquiz", "edit_quiz_question",
    "view_download_student", "sync_students", "view_school_contribution", "create_fees_collection", "update_fees_collection", "delete_fees_collection",
    "view_feedback_detail", "view_plus_reach", "view_reach_school", "view_impact", "view_fees_collection", "view_tech_downtime",
    "view_offline_report", "view_online_report", "view_offline_quiz_score", "view_download_student_quiz_score", "view_class_quiz_score", "view_download_class_quiz_score",
    "view_current_level", "download_current_level", "view_active_status", "download_active_status", "view_student_level_quiz", "download_student_level_quiz",
    "view_class_level_quiz", "download_class_level_quiz", "view_online_quiz_score", "view_download_online_student_quiz_score", "view_online_class_quiz_score", "view_download_online_class_quiz_score",
    "view_online_current_level", "download_online_current_level", "view_online_active_status", "download_online_active_status", "view_online_student_level_quiz", "download_online_student_level_quiz",
    "view_online_class_level_quiz", "download_online_class_level_quiz", "view_sync_record", "view_map",
  ],
  Admin: [
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
  Teacher: [
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
  User: [
  ],
  "API Key": [
  ],
};
