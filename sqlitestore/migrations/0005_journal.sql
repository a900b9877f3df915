-- No change to the tables: from this version on, a data folder has a
-- journal beside lapse.db (lapse.journal), which holds the last writes
-- before SQLite does. A lapse from before it would not read the journal and
-- would lose those writes: the version number keeps such a lapse out of the
-- folder, as it keeps out every lapse older than the folder.
SELECT 1;
