//! The CQL schema (`schemas/cql/`) and `engram migrate`.
//!
//! The files are compiled in, so a binary always carries the schema it was
//! written against. Numbered files are applied in order, once each; the
//! `schema_migrations` table records which. Every statement is idempotent
//! (`IF NOT EXISTS`), so a migration interrupted half-way is run again whole.

use crate::config::ScyllaConfig;

/// Keyspace and migration bookkeeping, with `{keyspace}` and
/// `{replication}` placeholders.
const KEYSPACE_CQL: &str = include_str!("../../../schemas/cql/keyspace.cql");

/// One numbered schema file.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i32,
    pub description: &'static str,
    pub cql: &'static str,
    /// Data this version needs filled in once its statements ran.
    pub backfill: Option<Backfill>,
}

/// A data step of a migration, run by `engram migrate` after the version's
/// statements and before the version is recorded (so an interrupted one
/// runs again whole; each is idempotent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backfill {
    /// Every stored user into `waiting_users_by_bucket`, under each of its
    /// sources.
    WaitingUsers,
}

/// How many buckets `waiting_users_by_bucket` spreads a stream's users over.
pub const WAITING_BUCKETS: i32 = 64;

/// A user's bucket in `waiting_users_by_bucket`: FNV-1a of the user id, so
/// every engram version puts a user in the same one.
pub fn waiting_bucket(user_id: &str) -> i32 {
    let hash = user_id.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    (hash % WAITING_BUCKETS as u32) as i32
}

/// Every schema version, in order. Released files never change: new ones
/// are appended.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        description: "memories, salience, content hashes, links both ways, user state, run reports",
        cql: include_str!("../../../schemas/cql/001_initial.cql"),
        backfill: None,
    },
    Migration {
        version: 2,
        description: "frozen lists, the commit journal and its seal",
        cql: include_str!("../../../schemas/cql/002_journal.cql"),
        backfill: None,
    },
    Migration {
        version: 3,
        description: "the users waiting on each input stream",
        cql: include_str!("../../../schemas/cql/003_waiting_users.cql"),
        // Version 4's table replaces this one; its backfill fills that.
        backfill: None,
    },
    Migration {
        version: 4,
        description: "the users waiting on each input stream, in buckets",
        cql: include_str!("../../../schemas/cql/004_waiting_users_by_bucket.cql"),
        backfill: Some(Backfill::WaitingUsers),
    },
    Migration {
        version: 5,
        description: "memory update times, erased-user tombstones",
        cql: include_str!("../../../schemas/cql/005_erasure.cql"),
        backfill: None,
    },
];

/// `(table, column)` of an `ALTER TABLE <table> ADD <column> <type>`
/// statement: CQL has no `IF NOT EXISTS` for it, so `migrate` runs it only
/// when the column is missing.
pub fn added_column(statement: &str) -> Option<(&str, &str)> {
    let rest = statement.strip_prefix("ALTER TABLE ")?;
    let mut words = rest.split_whitespace();
    let table = words.next()?;
    (words.next()? == "ADD").then_some(())?;
    let column = words.next()?;
    words.next()?;
    Some((table, column))
}

/// The version a store must be at for this engram to use it.
pub fn latest_version() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Statements `migrate` goes through: the keyspace's and every version's.
pub fn statement_count() -> usize {
    statements(KEYSPACE_CQL).len()
        + MIGRATIONS
            .iter()
            .map(|m| statements(m.cql).len())
            .sum::<usize>()
}

/// The statements of a CQL file: comments dropped, split at `;`.
pub fn statements(cql: &str) -> Vec<String> {
    let without_comments: String = cql
        .lines()
        .map(|line| match line.find("--") {
            Some(start) => &line[..start],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    without_comments
        .split(';')
        .map(|statement| statement.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|statement| !statement.is_empty())
        .collect()
}

/// Checks a keyspace name, which is spliced into CQL text (CQL cannot bind
/// it): only a plain unquoted identifier is accepted.
pub fn check_keyspace(name: &str) -> Result<(), String> {
    check_name(name, "scylla.keyspace", &['_'])
}

/// Checks a datacenter name, spliced into the replication map as a quoted
/// string; datacenter names often hold `-`.
fn check_datacenter(name: &str) -> Result<(), String> {
    check_name(name, "datacenter", &['_', '-'])
}

fn check_name(name: &str, what: &str, extra: &[char]) -> Result<(), String> {
    let mut chars = name.chars();
    let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || extra.contains(&c))
        && name.len() <= 48;
    if valid {
        Ok(())
    } else {
        Err(format!(
            "{what} `{name}` must start with a letter and hold at most 48 letters, digits or {extra:?}"
        ))
    }
}

/// The replication map of the keyspace, from the config.
pub fn replication(config: &ScyllaConfig) -> Result<String, String> {
    match config.replication_class.as_str() {
        "SimpleStrategy" => {
            if !config.datacenters.trim().is_empty() {
                return Err(
                    "scylla.datacenters needs replication_class = NetworkTopologyStrategy".into(),
                );
            }
            Ok(format!(
                "{{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                positive_factor(config.replication_factor)?
            ))
        }
        "NetworkTopologyStrategy" => {
            if config.datacenters.trim().is_empty() {
                return Ok(format!(
                    "{{'class': 'NetworkTopologyStrategy', 'replication_factor': {}}}",
                    positive_factor(config.replication_factor)?
                ));
            }
            let mut entries = Vec::new();
            for entry in config.datacenters.split(',') {
                let (name, factor) = entry.trim().split_once(':').ok_or_else(|| {
                    format!("scylla.datacenters entry `{entry}` is not `name:factor`")
                })?;
                let name = name.trim();
                check_datacenter(name)?;
                let factor: u32 = factor.trim().parse().map_err(|_| {
                    format!("scylla.datacenters: `{factor}` is not a replication factor")
                })?;
                // Datacenter names are case-sensitive strings in the map.
                entries.push(format!("'{name}': {}", positive_factor(factor)?));
            }
            Ok(format!(
                "{{'class': 'NetworkTopologyStrategy', {}}}",
                entries.join(", ")
            ))
        }
        other => Err(format!(
            "scylla.replication_class must be NetworkTopologyStrategy or SimpleStrategy, not `{other}`"
        )),
    }
}

fn positive_factor(factor: u32) -> Result<u32, String> {
    if (1..=32).contains(&factor) {
        Ok(factor)
    } else {
        Err(format!(
            "replication factor {factor} is not between 1 and 32"
        ))
    }
}

/// The keyspace statements with the config's keyspace and replication.
pub fn keyspace_statements(config: &ScyllaConfig) -> Result<Vec<String>, String> {
    check_keyspace(&config.keyspace)?;
    let replication = replication(config)?;
    Ok(statements(KEYSPACE_CQL)
        .into_iter()
        .map(|statement| {
            statement
                .replace("{keyspace}", &config.keyspace)
                .replace("{replication}", &replication)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_drop_comments_and_split_at_semicolons() {
        let cql = "-- a comment; with a semicolon\nCREATE TABLE a (x int PRIMARY KEY); -- trailing\n\n  CREATE TABLE b (y int PRIMARY KEY);\n";
        assert_eq!(
            statements(cql),
            vec![
                "CREATE TABLE a (x int PRIMARY KEY)",
                "CREATE TABLE b (y int PRIMARY KEY)"
            ]
        );
    }

    #[test]
    fn every_schema_statement_is_idempotent() {
        let mut tables = Vec::new();
        for migration in MIGRATIONS {
            for statement in statements(migration.cql) {
                // Setting a table option again sets it to the same value.
                let sets_option = statement.starts_with("ALTER TABLE ")
                    && statement.contains(" WITH ")
                    && !statement.contains(" ADD ");
                assert!(
                    statement.contains("IF NOT EXISTS")
                        || added_column(&statement).is_some()
                        || sets_option,
                    "{statement}"
                );
                if let Some(rest) = statement.strip_prefix("CREATE TABLE IF NOT EXISTS ") {
                    tables.extend(rest.split_whitespace().next().map(str::to_owned));
                }
            }
        }
        for table in [
            "memories",
            "memory_salience",
            "memory_hashes",
            "links",
            "links_by_target",
            "user_state",
            "run_reports",
            "run_reports_by_id",
        ] {
            assert!(tables.iter().any(|t| t == table), "no table {table}");
        }
    }

    #[test]
    fn an_added_column_is_named_so_migrate_can_skip_it() {
        assert_eq!(
            added_column("ALTER TABLE memories ADD tags_frozen frozen<list<text>>"),
            Some(("memories", "tags_frozen"))
        );
        assert_eq!(added_column("ALTER TABLE memories ADD"), None);
        assert_eq!(added_column("ALTER TABLE memories DROP tags"), None);
        assert_eq!(added_column("CREATE TABLE IF NOT EXISTS a (x int)"), None);
        let version_2 = statements(MIGRATIONS[1].cql);
        let added = version_2.iter().filter_map(|s| added_column(s)).count();
        assert_eq!(added, 6, "{version_2:?}");
    }

    #[test]
    fn versions_are_consecutive_from_one() {
        for (index, migration) in MIGRATIONS.iter().enumerate() {
            assert_eq!(migration.version as usize, index + 1);
        }
        assert_eq!(latest_version() as usize, MIGRATIONS.len());
    }

    #[test]
    fn the_keyspace_is_rendered_from_checked_settings_only() {
        let mut config = ScyllaConfig::default();
        let rendered = keyspace_statements(&config).unwrap();
        assert_eq!(
            rendered[0],
            "CREATE KEYSPACE IF NOT EXISTS engram WITH replication = \
             {'class': 'NetworkTopologyStrategy', 'replication_factor': 3} AND durable_writes = true"
        );
        assert!(rendered[1].starts_with("CREATE TABLE IF NOT EXISTS engram.schema_migrations"));

        config.datacenters = "eu-west:3, us_east:2".into();
        assert!(
            keyspace_statements(&config).unwrap()[0]
                .contains("{'class': 'NetworkTopologyStrategy', 'eu-west': 3, 'us_east': 2}")
        );

        config.replication_class = "SimpleStrategy".into();
        assert!(
            keyspace_statements(&config).is_err(),
            "datacenters need NTS"
        );
        config.datacenters.clear();
        config.replication_factor = 1;
        assert!(keyspace_statements(&config).unwrap()[0].contains("'SimpleStrategy'"));

        for keyspace in ["engram; DROP KEYSPACE x", "1abc", "", "a'b", "a-b"] {
            config.keyspace = keyspace.into();
            assert!(keyspace_statements(&config).is_err(), "{keyspace}");
        }
        config.keyspace = "engram".into();
        config.datacenters = "dc1:3'}; DROP".into();
        config.replication_class = "NetworkTopologyStrategy".into();
        assert!(keyspace_statements(&config).is_err());
        config.datacenters = "dc1:0".into();
        assert!(keyspace_statements(&config).is_err());
    }
}
