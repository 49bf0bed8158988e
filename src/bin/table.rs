fn main() {
    tokenpipe_cli::run_anyhow("table", tokenpipe_table::main)
}
