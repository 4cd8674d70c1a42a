//! The four-policy table for seeds 7, 11 and 13, locked in `snapshots/`. A change here is a change
//! in behaviour: review it, and say why in the commit.

use loadsim::report::{Render, table::Table};

use super::common::{POLICIES, run};

#[test]
fn article_table_per_seed() {
    for seed in [7u64, 11, 13] {
        let runs: Vec<_> = POLICIES.iter().map(|p| run(p, &[], seed)).collect();
        let text = Table.render(&runs);
        insta::with_settings!({ snapshot_path => "../../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(format!("article_table_seed_{seed}"), text);
        });
    }
}
