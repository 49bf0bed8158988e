fn main() {
    tokenpipe_cli::run("table", tokenpipe_table::main)
}
