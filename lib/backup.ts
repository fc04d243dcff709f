import { Aws, Duration, Fn, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { Monitoring } from './monitoring';
import { acknowledge } from './nag';

/** The AWS Backup plan of the user data (README, "Deployment" → "Restore"). */
export interface BackupSettings {
  /** How long each daily recovery point is kept. @default Duration.days(35) */
  readonly dailyRetention?: Duration;
  /** How long each monthly recovery point is kept (0 days: no monthly ones). @default Duration.days(365) */
  readonly monthlyRetention?: Duration;
  /** Hour (UTC) of the daily backup. @default 3 */
  readonly hourUtc?: number;
  /**
   * Refuse the deletion of recovery points (and changes to their lifecycle or to the vault's
   * policy) to everyone, the operator included, until the vault's access policy is removed: a
   * stolen credential cannot erase the backups with the data.
   * @default true
   */
  readonly blockRecoveryPointDeletion?: boolean;
}

export interface DataBackupProps {
  readonly settings?: BackupSettings;
  readonly tables: dynamodb.ITable[];
  /** Versioned buckets (AWS Backup of S3 requires versioning). */
  readonly buckets: s3.IBucket[];
  /** Failed backup and restore jobs notify its topic (the alarm topic), which lets AWS Backup publish. */
  readonly monitoring?: Pick<Monitoring, 'topic' | 'allowPublish'>;
  /** Encrypts the vault's recovery points. @default - the AWS Backup managed key */
  readonly encryptionKey?: kms.IKey;
}

/**
 * Daily and monthly recovery points of the tables and the memory bucket in a vault of their own.
 * The vault outlives the stack (RETAIN): backups are for the day the stack or its data is gone.
 * Point-in-time recovery of the tables (35 days) stays the first tool; this is the second copy,
 * kept longer and out of the functions' reach.
 */
export class DataBackup extends Construct {
  readonly vault: backup.BackupVault;
  readonly plan: backup.BackupPlan;
  readonly selection: backup.BackupSelection;

  constructor(scope: Construct, id: string, props: DataBackupProps) {
    super(scope, id);
    const s = props.settings ?? {};
    const hour = s.hourUtc ?? 3;
    if (!Number.isInteger(hour) || hour < 0 || hour > 23) throw new Error(`backup.hourUtc must be a whole hour 0-23, got ${hour}`);
    this.vault = new backup.BackupVault(this, 'Vault', {
      // The vault outlives the stack, and CloudFormation requires a vault name: a name of this
      // stack's own (the last group of its id's UUID, new with every stack) lets the same stage
      // deploy again after a destroy beside the vault the last one left (README, "Destroy").
      backupVaultName: Fn.join('-', [Stack.of(this).stackName.slice(0, 37), Fn.select(4, Fn.split('-', Fn.select(2, Fn.split('/', Aws.STACK_ID))))]),
      encryptionKey: props.encryptionKey,
      removalPolicy: RemovalPolicy.RETAIN,
      blockRecoveryPointDeletion: s.blockRecoveryPointDeletion ?? true,
    });
    if (props.monitoring) {
      // Set on the vault directly: the construct's own `notificationTopic` would grant AWS Backup
      // the topic without the source-account condition every publisher has here.
      (this.vault.node.defaultChild as backup.CfnBackupVault).notifications = {
        snsTopicArn: props.monitoring.topic.topicArn,
        backupVaultEvents: [
          backup.BackupVaultEvents.BACKUP_JOB_FAILED,
          backup.BackupVaultEvents.BACKUP_JOB_EXPIRED,
          backup.BackupVaultEvents.RESTORE_JOB_FAILED,
        ],
      };
      props.monitoring.allowPublish('backup.amazonaws.com');
    }
    const daily = s.dailyRetention ?? Duration.days(35);
    const monthly = s.monthlyRetention ?? Duration.days(365);
    const rules = [
      new backup.BackupPlanRule({
        ruleName: 'Daily',
        scheduleExpression: events.Schedule.cron({ minute: '0', hour: String(hour) }),
        deleteAfter: daily,
      }),
    ];
    if (monthly.toDays() > 0) {
      rules.push(
        new backup.BackupPlanRule({
          ruleName: 'Monthly',
          scheduleExpression: events.Schedule.cron({ day: '1', hour: String(hour), minute: '30' }),
          deleteAfter: monthly,
        }),
      );
    }
    this.plan = new backup.BackupPlan(this, 'Plan', { backupVault: this.vault, backupPlanRules: rules });
    this.selection = this.plan.addSelection('UserData', {
      resources: [
        ...props.tables.map((t) => backup.BackupResource.fromDynamoDbTable(t)),
        ...props.buckets.map((b) => backup.BackupResource.fromArn(b.bucketArn)),
      ],
      allowRestores: true,
    });
    const role = this.selection.grantPrincipal as iam.Role;
    // S3 needs its own two managed policies besides the generic ones the selection attaches.
    role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('AWSBackupServiceRolePolicyForS3Backup'));
    role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('AWSBackupServiceRolePolicyForS3Restore'));
    for (const policy of [
      'service-role/AWSBackupServiceRolePolicyForBackup',
      'service-role/AWSBackupServiceRolePolicyForRestores',
      'AWSBackupServiceRolePolicyForS3Backup',
      'AWSBackupServiceRolePolicyForS3Restore',
    ]) {
      acknowledge(
        role,
        `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policy}]`,
        'The role AWS Backup assumes to back up and restore the selected tables and bucket: AWS maintains these policies for exactly that (they follow new backup features), and the selection limits what the plan touches.',
      );
    }
  }
}
